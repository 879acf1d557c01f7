coroutine.yield("from module body")
return {}
