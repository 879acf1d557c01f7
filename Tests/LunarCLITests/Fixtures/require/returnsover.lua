package.loaded[...] = "set by the module"
return "returned"
