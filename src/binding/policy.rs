//! `checkCommand(command, policy?)`: conversion only; the rules live in
//! `native_shell_service::policy`.

use napi_derive::napi;

use super::errors::Settled;
use super::object_arg::ObjectArg;
use native_shell_service::base::error::ServiceError;
use native_shell_service::policy;

/// The Gemini CLI's tool lists, e.g. `run_shell_command(git)`.
#[napi(object, js_name = "CommandPolicy")]
pub struct CommandPolicyInput {
    /// Denylist: a command matching any entry is refused (`deny`).
    pub exclude_tools: Option<Vec<String>>,
    /// Allowlist: a command is `allow`ed only if every part matches an entry.
    pub core_tools: Option<Vec<String>>,
    /// Entries the user approved earlier in the session; they allow like `coreTools`.
    pub session_approvals: Option<Vec<String>>,
}

// A union type in index.d.ts, made from the core's enum as the statuses in types.rs are.
/// The verdict on a command (`Decision` in src/policy/mod.rs).
#[napi(string_enum = "snake_case")]
pub enum CommandDecision {
    Allow,
    Deny,
    Ask,
}

impl From<policy::Decision> for CommandDecision {
    fn from(decision: policy::Decision) -> Self {
        match decision {
            policy::Decision::Allow => Self::Allow,
            policy::Decision::Deny => Self::Deny,
            policy::Decision::Ask => Self::Ask,
        }
    }
}

#[napi(object, js_name = "CommandCheck")]
pub struct CommandCheckResult {
    pub decision: CommandDecision,
    /// Command names, first-seen order, wrappers and what they run (`sudo`, `rm`).
    pub roots: Vec<String>,
    /// The text of every simple command.
    pub subcommands: Vec<String>,
    /// `$(...)`, backticks, `<(...)`, `>(...)` or `${x@P}` was found.
    pub has_substitution: bool,
    /// Output goes to a file (`/dev/null` excepted).
    pub has_redirection: bool,
    pub reason: String,
}

/// Synchronous and fast (microseconds for a typical command); parses with a bash
/// grammar. Throws `INVALID_ARGUMENT` for a command over the size limit.
#[napi(ts_return_type = "CommandCheck", catch_unwind)]
pub fn check_command(
    command: String,
    #[napi(ts_arg_type = "CommandPolicy | undefined | null")] policy: Option<ObjectArg<CommandPolicyInput>>,
) -> Settled<CommandCheckResult> {
    let policy = match ObjectArg::open(policy) {
        Ok(policy) => policy,
        Err(e) => return Settled::Err(e),
    };
    let policy = policy.map_or_else(policy::CommandPolicy::default, |p| policy::CommandPolicy {
        exclude_tools: p.exclude_tools.unwrap_or_default(),
        core_tools: p.core_tools.unwrap_or_default(),
        session_approvals: p.session_approvals.unwrap_or_default(),
    });
    match policy::check_command(&command, &policy) {
        Ok(check) => Settled::Ok(CommandCheckResult {
            decision: check.decision.into(),
            roots: check.roots,
            subcommands: check.subcommands,
            has_substitution: check.has_substitution,
            has_redirection: check.has_redirection,
            reason: check.reason,
        }),
        Err(e) => Settled::Err(ServiceError::invalid(e.to_string())),
    }
}
