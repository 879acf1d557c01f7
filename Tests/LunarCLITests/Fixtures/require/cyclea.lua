local a = { name = "a" }
package.loaded.cyclea = a
a.b = require("cycleb")
return a
