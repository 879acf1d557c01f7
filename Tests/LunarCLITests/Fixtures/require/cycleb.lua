local a = require("cyclea")
return { seen = a.name }
