// Stands in for @koishijs/plugin-database-sqlite 4.x (docs/testing.md): the registry here has
// only 3.9.0, which fails on Koishi 4.18 (`defineDriver is not a function`). 4.x is this
// driver under Koishi's name; like it, the driver starts asynchronously, after the app's ready.
module.exports = require('@minatojs/driver-sqlite')
