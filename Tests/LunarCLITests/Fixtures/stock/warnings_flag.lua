-- Run with -W: warnings are on from the start.
warn("on from the start")
warn("@off")
warn("hidden")
print("done")
