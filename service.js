// The package entry (package.json "main"; written by hand, unlike the generated loader
// index.js it wraps): the addon's exports, with a `ShellExecutionService` that is the
// in-process service unless `daemon` is asked for, then a daemon client (client/entry.ts,
// docs/daemon.md). Types: service.d.ts.
const native = require('./index.js')
const { withDaemon } = require('./dist/client/entry.js')

module.exports = withDaemon(native, { packageRoot: __dirname, version: require('./package.json').version })
