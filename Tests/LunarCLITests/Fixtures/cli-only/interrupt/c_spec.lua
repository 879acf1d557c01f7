-- Never starts: Ctrl-C came while the file before it ran.
it("never runs", function() end)
