// The package entry (package.json "main"; written by hand, unlike the generated loader
// index.js it wraps): the addon's exports, with a `ShellExecutionService` that is the
// in-process service unless `daemon` is asked for, then a daemon client (client/entry.ts,
// docs/daemon.md). Types: service.d.ts.
const native = require('./index.js')
const { withDaemon } = require('./dist/client/entry.js')

const entry = withDaemon(native, { packageRoot: __dirname, version: require('./package.json').version })

// One assignment per name (not `module.exports = entry`), so Node's CommonJS lexer sees
// them and `import { ShellExecutionService } from 'native-shell-service'` works from ESM.
module.exports.ShellExecutionService = entry.ShellExecutionService
module.exports.JsShellExecutionService = entry.JsShellExecutionService
module.exports.checkCommand = entry.checkCommand
// The pid at the other end of a connected unix socket (the MCP server beside the daemon
// serves the daemon only: tools/mcp/http.ts).
module.exports.unixPeerPid = entry.unixPeerPid
module.exports.CommandDecision = entry.CommandDecision
module.exports.ContainmentMode = entry.ContainmentMode
module.exports.JobMode = entry.JobMode
module.exports.JobStatus = entry.JobStatus
module.exports.RunStatus = entry.RunStatus
module.exports.WaitStatus = entry.WaitStatus
module.exports.__napiBindingTarget = entry.__napiBindingTarget
