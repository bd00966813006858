//! The policy table: (command, allow entries, deny entries, decision, roots).
//!
//! Entries are written short: `git` means `run_shell_command(git)`, `*` means
//! `run_shell_command`, `session:x` puts `run_shell_command(x)` in
//! `session_approvals`, and `raw:...` is used verbatim.

use super::Decision::{Allow, Ask, Deny};
use super::*;

const NONE: &[&str] = &[];
const ALL: &[&str] = &["*"];

type Case = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    Decision,
    &'static [&'static str],
);

#[rustfmt::skip]
const CASES: &[Case] = &[
    // ── Splitting into simple commands ─────────────────────────────────────────
    ("ls -l", ALL, NONE, Allow, &["ls"]),
    ("a;b|c&&d||e&f", ALL, NONE, Allow, &["a", "b", "c", "d", "e", "f"]),
    ("a\nb\nc", ALL, NONE, Allow, &["a", "b", "c"]),
    ("a\r\nb", ALL, NONE, Allow, &["a", "b"]),
    ("(a; b) && { c; d; }", ALL, NONE, Allow, &["a", "b", "c", "d"]),
    ("if a; then b; elif c; then d; else e; fi", ALL, NONE, Allow, &["a", "b", "c", "d", "e"]),
    ("while a; do b; done; until c; do d; done", ALL, NONE, Allow, &["a", "b", "c", "d"]),
    ("for i in 1 2 3; do echo $i; done", ALL, NONE, Allow, &["echo"]),
    ("for ((i=0;i<3;i++)); do echo $i; done", ALL, NONE, Allow, &["echo"]),
    ("select x in a b; do echo $x; break; done", ALL, NONE, Allow, &["echo", "break"]),
    ("case $x in a|b) make;; *) ls;; esac", ALL, NONE, Allow, &["make", "ls"]),
    ("f() { rm -rf build; }; f", ALL, NONE, Allow, &["rm", "f"]),
    ("function g { ls; }", ALL, NONE, Allow, &["ls"]),
    ("! grep -q x file", ALL, NONE, Allow, &["grep"]),
    ("a | b | c", ALL, NONE, Allow, &["a", "b", "c"]),
    ("make 2>&1 |& tee", ALL, NONE, Allow, &["make", "tee"]),
    ("sleep 1 & wait", ALL, NONE, Allow, &["sleep", "wait"]),
    ("ls -la && ls", ALL, NONE, Allow, &["ls"]),
    ("ls -la\n\n\nls", ALL, NONE, Allow, &["ls"]),
    ("echo done &", ALL, NONE, Allow, &["echo"]),
    // ── Assignments, quoting of names ─────────────────────────────────────────
    ("FOO=1 git status", &["git status"], NONE, Allow, &["git"]),
    ("FOO=1 BAR=\"x y\" make test", &["make test"], NONE, Allow, &["make"]),
    ("X=1", ALL, NONE, Allow, &[]),
    ("X=1", NONE, NONE, Ask, &[]),
    ("X=1; Y=2", &["ls"], NONE, Ask, &[]),
    ("", NONE, NONE, Ask, &[]),
    ("  \n\t ", ALL, NONE, Allow, &[]),
    ("# just a comment", &["ls"], NONE, Ask, &[]),
    ("'git' status", &["git status"], NONE, Allow, &["git"]),
    ("g\"it\" status", &["git status"], NONE, Allow, &["git"]),
    ("\\git status", &["git status"], NONE, Allow, &["git"]),
    ("git 'status'", &["git status"], NONE, Allow, &["git"]),
    ("./build.sh --fast", &["./build.sh"], NONE, Allow, &["./build.sh"]),
    ("/usr/bin/git status", &["git"], NONE, Ask, &["/usr/bin/git"]),
    ("./git status", &["git"], NONE, Ask, &["./git"]),
    ("cd src && cargo build", &["cd", "cargo"], NONE, Allow, &["cd", "cargo"]),
    ("export FOO=1 && npm test", &["npm"], NONE, Ask, &["export", "npm"]),
    ("export FOO=1 && npm test", &["npm", "export"], NONE, Allow, &["export", "npm"]),
    ("unset X; ls", ALL, NONE, Allow, &["unset", "ls"]),
    ("declare -a arr=(1 2); echo ${arr[0]}", ALL, NONE, Allow, &["declare", "echo"]),
    ("local x=1", &["local"], NONE, Allow, &["local"]),
    ("[[ -f Cargo.toml ]] && cargo test", &["cargo"], NONE, Allow, &["cargo"]),
    ("[ -d x ] || mkdir x", &["mkdir"], NONE, Allow, &["mkdir"]),
    ("test -f x && cat x", &["cat"], NONE, Ask, &["test", "cat"]),
    ("(( n = 1 + 2 )); echo $n", &["echo"], NONE, Allow, &["echo"]),
    ("time ls", &["time", "ls"], NONE, Allow, &["time", "ls"]),
    ("# build\nset -e\ncargo build --release  # compile\ncargo test\n", &["set", "cargo"], NONE, Allow, &["set", "cargo"]),
    ("r\\\nm -rf /tmp/x", NONE, &["rm"], Deny, &["rm"]),
    ("git \\\n  status", &["git status"], NONE, Allow, &["git"]),
    ("echo $\"hello\"", &["echo"], NONE, Allow, &["echo"]),
    // ── Wrappers: both the wrapper and what it runs are roots ─────────────────
    ("sudo rm -rf x", ALL, NONE, Allow, &["sudo", "rm"]),
    ("sudo -u bob -- rm x", ALL, NONE, Allow, &["sudo", "rm"]),
    ("sudo -E -u root ls", ALL, NONE, Allow, &["sudo", "ls"]),
    ("sudo -ubob FOO=1 ls", ALL, NONE, Allow, &["sudo", "ls"]),
    ("env FOO=1 BAR=2 node app.js", ALL, NONE, Allow, &["env", "node"]),
    ("env -i -u HOME python3 x.py", ALL, NONE, Allow, &["env", "python3"]),
    ("env - ls", ALL, NONE, Allow, &["env", "ls"]),
    ("env", ALL, NONE, Allow, &["env"]),
    ("timeout 5 curl example.com", ALL, NONE, Allow, &["timeout", "curl"]),
    ("timeout -s KILL --preserve-status 10s make", ALL, NONE, Allow, &["timeout", "make"]),
    ("timeout --signal TERM 1m make", ALL, NONE, Allow, &["timeout", "make"]),
    ("nice -n 10 make -j4", ALL, NONE, Allow, &["nice", "make"]),
    ("nice -5 make", ALL, NONE, Allow, &["nice", "make"]),
    ("nohup ./server &", ALL, NONE, Allow, &["nohup", "./server"]),
    ("command ls", ALL, NONE, Allow, &["command", "ls"]),
    ("command -v git", ALL, NONE, Allow, &["command"]),
    ("exec python3 app.py", ALL, NONE, Allow, &["exec", "python3"]),
    ("exec -a name python3", ALL, NONE, Allow, &["exec", "python3"]),
    ("find . -name '*.o' | xargs rm -f", ALL, NONE, Allow, &["find", "xargs", "rm"]),
    ("xargs -n 1 -I {} echo {}", ALL, NONE, Allow, &["xargs", "echo"]),
    ("find . -name '*.tmp' -exec rm {} \\;", ALL, NONE, Allow, &["find", "rm"]),
    ("find . -type f -execdir chmod 644 {} +", ALL, NONE, Allow, &["find", "chmod"]),
    ("sudo timeout 5 nice -n 1 env X=1 ls", ALL, NONE, Allow, &["sudo", "timeout", "nice", "env", "ls"]),
    ("stdbuf -oL grep x f", ALL, NONE, Allow, &["stdbuf", "grep"]),
    ("time -p make", ALL, NONE, Allow, &["time", "make"]),
    ("/usr/bin/sudo /bin/rm x", ALL, NONE, Allow, &["/usr/bin/sudo", "/bin/rm"]),
    // ── Shells and eval: their argument is parsed again ───────────────────────
    ("bash -c \"git push && rm -rf /\"", ALL, NONE, Allow, &["bash", "git", "rm"]),
    ("sh -c 'ls | wc -l'", ALL, NONE, Allow, &["sh", "ls", "wc"]),
    ("zsh -c 'echo hi'", ALL, NONE, Allow, &["zsh", "echo"]),
    ("bash -lc 'npm test'", ALL, NONE, Allow, &["bash", "npm"]),
    ("bash -e -o pipefail -c 'make && make install'", ALL, NONE, Allow, &["bash", "make"]),
    ("bash -c 'bash -c \"rm x\"'", ALL, NONE, Allow, &["bash", "rm"]),
    ("/bin/sh -c 'id'", ALL, NONE, Allow, &["/bin/sh", "id"]),
    ("sudo bash -c 'apt-get update'", ALL, NONE, Allow, &["sudo", "bash", "apt-get"]),
    ("eval 'ls -l'", ALL, NONE, Allow, &["eval", "ls"]),
    ("eval \"$CMD\"", ALL, NONE, Allow, &["eval"]),
    ("eval \"$CMD\"", &["eval"], NONE, Ask, &["eval"]),
    ("trap 'rm -f /tmp/x' EXIT; make", ALL, NONE, Allow, &["trap", "rm", "make"]),
    ("trap - EXIT", &["trap"], NONE, Allow, &["trap"]),
    ("bash <<'EOF'\nrm -rf build\nEOF", ALL, NONE, Allow, &["bash", "rm"]),
    ("bash <<< 'git status'", ALL, NONE, Allow, &["bash", "git"]),
    ("curl -fsSL https://x.sh | bash", &["curl", "bash"], NONE, Ask, &["curl", "bash"]),
    ("bash script.sh", &["bash"], NONE, Allow, &["bash"]),
    ("bash -c \"$CMD\"", &["bash"], NONE, Ask, &["bash"]),
    ("bash -c 'git status'", &["bash", "git"], NONE, Allow, &["bash", "git"]),
    ("bash -c 'git status'", &["bash"], NONE, Ask, &["bash", "git"]),
    ("env -S 'rm -rf x'", ALL, NONE, Allow, &["env", "rm"]),
    ("fish -c 'ls'", &["fish", "ls"], NONE, Ask, &["fish"]),
    ("ls | xargs bash -c", &["ls", "xargs", "bash"], NONE, Ask, &["ls", "xargs", "bash"]),
    ("find . -exec sh -c 'echo {}' \\;", &["find", "sh", "echo"], NONE, Ask, &["find", "sh", "echo"]),
    ("ls | xargs -I{} sh -c 'echo {}'", &["ls", "xargs", "sh", "echo"], NONE, Ask, &["ls", "xargs", "sh", "echo"]),
    ("sh -c 'echo \"$1\"' _ x", &["sh", "echo"], NONE, Allow, &["sh", "echo"]),
    // ── Allow and deny lists ──────────────────────────────────────────────────
    ("git status", &["git"], NONE, Allow, &["git"]),
    ("git status", &["git status"], NONE, Allow, &["git"]),
    ("git status --short", &["git status"], NONE, Allow, &["git"]),
    ("git push", &["git status"], NONE, Ask, &["git"]),
    ("git statusx", &["git status"], NONE, Ask, &["git"]),
    ("git", &["git status"], NONE, Ask, &["git"]),
    ("npm test", &["git"], NONE, Ask, &["npm"]),
    ("ls", NONE, NONE, Ask, &["ls"]),
    ("ls", &["raw:run_shell_command"], NONE, Allow, &["ls"]),
    ("ls", &["raw:ShellTool(ls)"], NONE, Allow, &["ls"]),
    ("ls", &["raw:read_file", "raw:run_shell_command( ls )"], NONE, Allow, &["ls"]),
    ("ls", &["raw:read_file"], NONE, Ask, &["ls"]),
    ("ls", &["session:ls"], NONE, Allow, &["ls"]),
    ("git status && npm test", &["git", "session:npm test"], NONE, Allow, &["git", "npm"]),
    ("git commit -m 'wip: x'", &["git commit"], NONE, Allow, &["git"]),
    ("git commit -m \"a b\"", &["git commit -m \"a b\""], NONE, Allow, &["git"]),
    ("rm -rf /", NONE, &["rm"], Deny, &["rm"]),
    ("rm -rf /", ALL, &["rm"], Deny, &["rm"]),
    ("rm x", &["rm"], &["rm"], Deny, &["rm"]),
    ("ls", ALL, ALL, Deny, &["ls"]),
    ("", ALL, ALL, Deny, &[]),
    ("ls && rm x", &["ls"], &["rm"], Deny, &["ls", "rm"]),
    ("sudo rm -rf /", ALL, &["rm"], Deny, &["sudo", "rm"]),
    ("/bin/rm x", ALL, &["rm"], Deny, &["/bin/rm"]),
    ("\\rm x", ALL, &["rm"], Deny, &["rm"]),
    ("'rm' x", ALL, &["rm"], Deny, &["rm"]),
    ("r''m x", ALL, &["rm"], Deny, &["rm"]),
    ("bash -c 'rm -rf /'", &["bash"], &["rm"], Deny, &["bash", "rm"]),
    ("find . -exec rm {} \\;", &["find"], &["rm"], Deny, &["find", "rm"]),
    ("ls | xargs rm", &["ls", "xargs"], &["rm"], Deny, &["ls", "xargs", "rm"]),
    ("eval rm -rf x", ALL, &["rm"], Deny, &["eval", "rm"]),
    ("git push --force", ALL, &["git push"], Deny, &["git"]),
    ("git status", ALL, &["git push"], Allow, &["git"]),
    ("git $SUB origin", ALL, &["git push"], Ask, &["git"]),
    ("git $SUB origin", &["git"], NONE, Allow, &["git"]),
    ("git \"$SUB\" origin", ALL, &["git push"], Ask, &["git"]),
    ("$CMD -rf /", ALL, &["rm"], Ask, &["$CMD"]),
    ("$CMD -rf /", &["rm"], NONE, Ask, &["$CMD"]),
    ("git pus? origin", ALL, &["git push"], Ask, &["git"]),
    ("rm *.tmp", &["rm"], &["rm -rf"], Allow, &["rm"]),
    ("rm -r? x", &["rm"], &["rm -rf"], Ask, &["rm"]),
    ("git {push,status}", ALL, &["git push"], Ask, &["git"]),
    ("xargs git", ALL, &["git push"], Ask, &["xargs", "git"]),
    ("sudo ls", &["ls"], NONE, Ask, &["sudo", "ls"]),
    ("sudo ls", &["sudo"], NONE, Ask, &["sudo", "ls"]),
    ("sudo ls", &["sudo", "ls"], NONE, Allow, &["sudo", "ls"]),
    ("command -v rm", &["command"], &["rm"], Allow, &["command"]),
    ("echo rm", &["echo"], &["rm"], Allow, &["echo"]),
    ("FOO=rm git status", &["git"], &["rm"], Allow, &["git"]),
    ("sudo -u rm ls", &["sudo", "ls"], &["rm"], Allow, &["sudo", "ls"]),
    ("git -C . push", &["git"], &["git push"], Ask, &["git"]),
    ("git --no-pager -c x=y push origin", &["git"], &["git push"], Ask, &["git"]),
    ("git log --grep push", &["git"], &["git push"], Allow, &["git"]),
    ("git commit -m push", &["git"], &["git push"], Allow, &["git"]),
    ("sudo -i", &["sudo"], NONE, Ask, &["sudo"]),
    ("sudo -u bob -s", &["sudo"], NONE, Ask, &["sudo"]),
    ("sudo -l", &["sudo"], NONE, Allow, &["sudo"]),
    ("ls &&", ALL, NONE, Ask, &["ls"]),
    // ── Substitution is refused wherever bash would run it ────────────────────
    ("echo $(whoami)", ALL, NONE, Deny, &["echo", "whoami"]),
    ("echo `whoami`", ALL, NONE, Deny, &["echo", "whoami"]),
    ("diff <(ls a) <(ls b)", ALL, NONE, Deny, &["diff", "ls"]),
    ("tee >(gzip > x.gz)", ALL, NONE, Deny, &["tee", "gzip"]),
    ("cat < <(ls)", ALL, NONE, Deny, &["cat", "ls"]),
    ("echo \"$(id)\"", ALL, NONE, Deny, &["echo", "id"]),
    ("echo \"`id`\"", ALL, NONE, Deny, &["echo", "id"]),
    ("echo ${x:-$(id)}", ALL, NONE, Deny, &["echo", "id"]),
    ("echo \"${x:-'$(id)'}\"", ALL, NONE, Deny, &["echo"]),
    ("echo $(( $(id) + 1 ))", ALL, NONE, Deny, &["echo", "id"]),
    ("echo $[ $(id) ]", ALL, NONE, Deny, &["echo", "id"]),
    ("(( x = $(id) ))", ALL, NONE, Deny, &["id"]),
    ("echo ${a[$(id)]}", ALL, NONE, Deny, &["echo", "id"]),
    ("echo ${z#$(id)}", ALL, NONE, Deny, &["echo"]),
    ("echo \"${z//`id`/y}\"", ALL, NONE, Deny, &["echo"]),
    ("X=$(id) ls", ALL, NONE, Deny, &["ls", "id"]),
    ("X=`id`", ALL, NONE, Deny, &["id"]),
    ("echo a#$(id)", ALL, NONE, Deny, &["echo", "id"]),
    ("case $(id) in x) ls;; esac", ALL, NONE, Deny, &["id", "ls"]),
    ("for f in $(ls); do echo $f; done", ALL, NONE, Deny, &["ls", "echo"]),
    ("[[ $(id) == x ]]", ALL, NONE, Deny, &["id"]),
    ("echo \"a $(b \"c\") d\"", ALL, NONE, Deny, &["echo", "b"]),
    ("ls > $(mktemp)", ALL, NONE, Deny, &["ls", "mktemp"]),
    ("echo $(ls", ALL, NONE, Deny, &["echo", "ls"]),
    ("echo ${x@P}", ALL, NONE, Deny, &["echo"]),
    ("echo \"${x@P}\"", ALL, NONE, Deny, &["echo"]),
    ("bash -c 'echo $(id)'", ALL, NONE, Deny, &["bash", "echo", "id"]),
    ("bash -c \"echo \\$(id)\"", ALL, NONE, Deny, &["bash", "echo", "id"]),
    ("trap 'echo $(id)' EXIT", ALL, NONE, Deny, &["trap", "echo", "id"]),
    ("eval 'echo `id`'", ALL, NONE, Deny, &["eval", "echo", "id"]),
    ("echo $\\\n(id)", ALL, NONE, Deny, &["echo", "id"]),
    // ── Here-documents and here-strings ───────────────────────────────────────
    ("cat <<EOF\n$(whoami)\nEOF", ALL, NONE, Deny, &["cat"]),
    ("cat <<EOF\nhello `whoami`\nEOF", ALL, NONE, Deny, &["cat"]),
    ("cat <<EOF\n${x:-$(id)}\nEOF", ALL, NONE, Deny, &["cat"]),
    ("cat <<EOF\nit's ${x:-'$(id)'}\nEOF", ALL, NONE, Deny, &["cat"]),
    ("cat <<-EOF\n\t$(id)\n\tEOF", ALL, NONE, Deny, &["cat"]),
    ("cat <<'EOF'\n$(whoami) `id`\nEOF", ALL, NONE, Allow, &["cat"]),
    ("cat <<\"EOF\"\n$(whoami)\nEOF", ALL, NONE, Allow, &["cat"]),
    ("cat <<\\EOF\n$(whoami)\nEOF", ALL, NONE, Allow, &["cat"]),
    // The grammar cannot parse a partly quoted delimiter: ask, but do not deny.
    ("cat <<E\"O\"F\n`id`\nEOF", ALL, NONE, Ask, &["cat"]),
    ("cat <<EOF\nsum: $((1+2)) \\$(not) \\`not\\` $HOME\nEOF", ALL, NONE, Allow, &["cat"]),
    ("cat > out.txt <<'EOF'\nit's $(fine)\nEOF\nchmod +x out.txt", &["cat", "chmod"], NONE, Allow, &["cat", "chmod"]),
    ("cat <<EOF | grep x && rm y\nbody\nEOF", ALL, NONE, Allow, &["cat", "grep", "rm"]),
    ("cat <<< \"$(id)\"", ALL, NONE, Deny, &["cat", "id"]),
    ("cat <<< '$(id)'", ALL, NONE, Allow, &["cat"]),
    ("grep x <<< \"$HOME\"", &["grep"], NONE, Allow, &["grep"]),
    ("bash <<EOF\necho \\$(id)\nEOF", ALL, NONE, Deny, &["bash", "echo", "id"]),
    ("bash <<'EOF'\necho $(id)\nEOF", ALL, NONE, Deny, &["bash", "echo", "id"]),
    ("python3 - <<'EOF'\nimport os; print(os.getcwd())\nEOF", &["python3"], NONE, Allow, &["python3"]),
    // ── Safe although they look dangerous ─────────────────────────────────────
    ("echo '$(rm -rf /)'", &["echo"], &["rm"], Allow, &["echo"]),
    ("echo 'rm -rf /'", &["echo"], &["rm"], Allow, &["echo"]),
    ("grep '`' file", &["grep"], NONE, Allow, &["grep"]),
    ("# $(x)", ALL, NONE, Allow, &[]),
    ("ls # `id` $(x) <(y)", &["ls"], NONE, Allow, &["ls"]),
    ("echo \\$\\(id\\) \\`id\\`", &["echo"], NONE, Allow, &["echo"]),
    ("echo \"\\$(id)\" \"\\`id\\`\"", &["echo"], NONE, Allow, &["echo"]),
    ("echo \"<(x)\" '>(y)'", &["echo"], NONE, Allow, &["echo"]),
    ("echo ${x:-'$(id)'}", &["echo"], NONE, Allow, &["echo"]),
    ("echo $(( 1 + 2 ))", &["echo"], NONE, Allow, &["echo"]),
    ("echo \"${x@Q}\" ${#y} ${!z}", &["echo"], NONE, Allow, &["echo"]),
    ("echo $'\\x24(id)'", &["echo"], NONE, Allow, &["echo"]),
    ("grep -r 'eval $(' src", &["grep"], NONE, Allow, &["grep"]),
    ("git commit -m 'fix: handle $(cmd) and `x`'", &["git commit"], NONE, Allow, &["git"]),
    ("printf '%s\\n' '`date`'", &["printf"], NONE, Allow, &["printf"]),
    ("echo \"price: \\$5\"", &["echo"], NONE, Allow, &["echo"]),
    ("awk '{print $1}' f", &["awk"], NONE, Allow, &["awk"]),
    ("sed -e 's/$(x)/y/' f", &["sed"], NONE, Allow, &["sed"]),
    ("echo '#' $HOME", &["echo"], NONE, Allow, &["echo"]),
    ("echo \"a'b\" 'c\"d' 'it'\\''s'", &["echo"], NONE, Allow, &["echo"]),
    ("echo \"multi\nline $HOME\"", &["echo"], NONE, Allow, &["echo"]),
    ("ls -la | grep -v '^d' | wc -l", &["ls", "grep", "wc"], NONE, Allow, &["ls", "grep", "wc"]),
    ("echo rm -rf / # not run", &["echo"], &["rm"], Allow, &["echo"]),
    ("cat file | sudo tee /etc/x > /dev/null", &["cat", "sudo", "tee"], NONE, Allow, &["cat", "sudo", "tee"]),
    // ── Cannot be judged: ask ─────────────────────────────────────────────────
    ("echo 'unterminated", ALL, NONE, Ask, &["echo"]),
    ("if true; then", ALL, NONE, Ask, &["true"]),
    ("ls )", ALL, NONE, Ask, &["ls"]),
    ("echo \\$(id)", ALL, NONE, Ask, &["echo", "id"]),
    ("PATH=/tmp:$PATH ls", &["ls"], NONE, Ask, &["ls"]),
    ("export PATH=/x:$PATH; ls", &["export", "ls"], NONE, Ask, &["export", "ls"]),
    ("PS4='$(id)' bash -xc true", &["bash", "true"], NONE, Ask, &["bash", "true"]),
    ("env LD_PRELOAD=./x.so ls", &["env", "ls"], NONE, Ask, &["env", "ls"]),
    ("LD_PRELOAD=./x.so ls", ALL, NONE, Allow, &["ls"]),
    ("LD_PRELOAD=./x.so ls", ALL, &["rm"], Ask, &["ls"]),
    ("FOO=1 ls", &["ls"], NONE, Allow, &["ls"]),
    ("eval eval eval eval eval eval eval eval eval eval ls", &["eval", "ls"], NONE, Ask, &["eval"]),
    ("sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo ls", &["sudo", "ls"], NONE, Ask, &["sudo"]),
];

fn policy_of(allow: &[&str], deny: &[&str]) -> CommandPolicy {
    fn entry(e: &str) -> String {
        match e {
            "*" => "run_shell_command".to_string(),
            _ => match e.strip_prefix("raw:") {
                Some(raw) => raw.to_string(),
                None => format!("run_shell_command({e})"),
            },
        }
    }
    let mut policy = CommandPolicy::default();
    for e in allow {
        match e.strip_prefix("session:") {
            Some(s) => policy.session_approvals.push(entry(s)),
            None => policy.core_tools.push(entry(e)),
        }
    }
    policy.exclude_tools = deny.iter().map(|e| entry(e)).collect();
    policy
}

#[test]
fn policy_table() {
    let mut failures = Vec::new();
    for (command, allow, deny, decision, roots) in CASES {
        let check = match check_command(command, &policy_of(allow, deny)) {
            Ok(check) => check,
            Err(e) => {
                failures.push(format!("{command:?}: error {e}"));
                continue;
            }
        };
        if check.decision != *decision || check.roots != *roots {
            failures.push(format!(
                "{command:?} allow={allow:?} deny={deny:?}\n    want {decision:?} {roots:?}\n    got  {:?} {:?} ({})",
                check.decision, check.roots, check.reason
            ));
        }
        if check.decision == Deny || check.decision == Ask {
            assert!(!check.reason.is_empty(), "{command:?} has no reason");
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// (command, has_substitution, has_redirection): the two flags, independently of
/// the decision.
#[rustfmt::skip]
const FLAGS: &[(&str, bool, bool)] = &[
    ("ls > out.txt", false, true),
    ("ls >> log", false, true),
    ("ls &> all.log", false, true),
    ("ls &>> all.log", false, true),
    ("ls 2> err.txt", false, true),
    ("echo hi >| f", false, true),
    ("ls >& f", false, true),
    ("ls > \"$OUT\"", false, true),
    ("exec 3> f", false, true),
    ("cat <<EOF > f\nx\nEOF", false, true),
    ("(cd x && make) > build.log 2>&1", false, true),
    ("bash -c 'ls > f'", false, true),
    ("ls 2>&1", false, false),
    ("ls > /dev/null 2>&1", false, false),
    ("ls &>/dev/null", false, false),
    ("ls >&2", false, false),
    ("ls >&-", false, false),
    ("ls < in.txt", false, false),
    ("echo x | tee f", false, false),
    ("echo '>' f", false, false),
    ("echo \"a > b\"", false, false),
    ("echo $(id) > f", true, true),
    ("echo `id`", true, false),
    ("cat <(ls)", true, false),
    ("echo ${x@P}", true, false),
    ("echo '$(id)'", false, false),
    ("cat <<'EOF'\n$(id)\nEOF", false, false),
];

#[test]
fn substitution_and_redirection_flags() {
    for (command, substitution, redirection) in FLAGS {
        let check = check_command(command, &CommandPolicy::default()).expect("small command");
        assert_eq!(
            (check.has_substitution, check.has_redirection),
            (*substitution, *redirection),
            "{command:?}: {}",
            check.reason
        );
        if *substitution {
            assert_eq!(check.decision, Deny, "{command:?}");
        }
    }
}

#[rustfmt::skip]
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    ("a && b | c", &["a", "b", "c"]),
    ("FOO=1 git status --short; ls", &["FOO=1 git status --short", "ls"]),
    ("bash -c 'git push && rm -rf /'", &["bash -c 'git push && rm -rf /'", "git push", "rm -rf /"]),
    ("cat <<EOF | grep x\nbody\nEOF", &["cat", "grep x"]),
    ("ls > out.txt", &["ls"]),
    ("if a; then b c; fi", &["a", "b c"]),
    ("export A=1", &["export A=1"]),
    ("sudo rm -rf x", &["sudo rm -rf x"]),
];

#[test]
fn subcommands_are_the_simple_commands() {
    for (command, want) in SUBCOMMANDS {
        let check = check_command(command, &CommandPolicy::default()).expect("small command");
        assert_eq!(check.subcommands, *want, "{command:?}");
    }
}

#[test]
fn size_limit() {
    let policy = CommandPolicy::default();
    let at_limit = "a".repeat(MAX_COMMAND_BYTES);
    assert!(check_command(&at_limit, &policy).is_ok());
    let over = "a".repeat(MAX_COMMAND_BYTES + 1);
    let err = check_command(&over, &policy).expect_err("over the limit");
    assert_eq!(
        err,
        PolicyError::TooLarge {
            len: MAX_COMMAND_BYTES + 1,
            max: MAX_COMMAND_BYTES
        }
    );
    assert!(err.to_string().contains(&MAX_COMMAND_BYTES.to_string()));
}

#[test]
fn serialises_in_camel_case() {
    let check = check_command("ls > f", &policy_of(&["ls"], NONE)).expect("small command");
    let json = serde_json::to_value(&check).expect("serialisable");
    assert_eq!(json["decision"], "allow");
    assert_eq!(json["roots"], serde_json::json!(["ls"]));
    assert_eq!(json["hasRedirection"], true);
    assert_eq!(json["hasSubstitution"], false);
    assert!(json["reason"].is_string());
    assert_eq!((Allow.as_str(), Deny.as_str(), Ask.as_str()), ("allow", "deny", "ask"));
}

#[test]
fn same_answers_on_many_threads() {
    let expected: Vec<_> = CASES
        .iter()
        .map(|(c, a, d, _, _)| check_command(c, &policy_of(a, d)).expect("small command"))
        .collect();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                CASES
                    .iter()
                    .map(|(c, a, d, _, _)| check_command(c, &policy_of(a, d)).expect("small"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().expect("no panic"), expected);
    }
}

/// Inputs that make the grammar slow or deep. Each must finish within the time
/// budget (plus slack for a debug build) and must not be allowed.
#[test]
fn pathological_inputs_are_bounded() {
    let generated = [
        "(".repeat(60_000),
        "{ ".repeat(60_000),
        "$(".repeat(40_000),
        "$((".repeat(40_000),
        "\"$(".repeat(30_000),
        "`".repeat(100_000),
        "a|".repeat(60_000),
        "<<E\n".repeat(30_000),
        "$[".repeat(60_000),
        "a=(".repeat(40_000),
        "${x:-".repeat(25_000),
        "\\\n".repeat(60_000),
        "if a; then ".repeat(11_000),
        "eval ".repeat(25_000) + "ls",
        "sudo ".repeat(25_000) + "ls",
        "bash -c ".repeat(15_000),
        "cat <<EOF\n$(x)\n".repeat(8_000),
    ];
    let policy = policy_of(ALL, NONE);
    for command in &generated {
        let command = &command[..command.len().min(MAX_COMMAND_BYTES)];
        let start = std::time::Instant::now();
        let check = check_command(command, &policy).expect("within the size limit");
        let elapsed = start.elapsed();
        assert!(
            elapsed < std::time::Duration::from_secs(5),
            "{:?}...: {elapsed:?}",
            &command[..20]
        );
        if check.decision == Allow {
            // Only acceptable when the policy allows everything and the text is
            // plain (nothing hidden, nothing unparsed).
            assert!(
                !check.has_substitution && !check.reason.contains("parse"),
                "{:?}...",
                &command[..20]
            );
        }
    }
}

#[test]
fn non_ascii_after_a_brace_never_reaches_cs_isdigit() {
    // tree-sitter-bash's scanner calls C `isdigit` on the character after `{`; a code
    // point past 255 read outside glibc's table and crashed (SIGSEGV) before the
    // grammar was given ASCII only.
    for cp in (0x100u32..=0x10FFFF).step_by(0x3F01).chain([0x10FFFF, 0xFFFD, 0x1F600]) {
        let Some(c) = char::from_u32(cp) else { continue };
        for command in [format!("echo {{{c}"), format!("{{{c}.."), format!("a {{{c}{c}}} b")] {
            assert!(check_command(&command, &CommandPolicy::default()).is_ok());
        }
    }
}

#[test]
fn denying_a_root_that_looks_like_a_glob_blocks_it() {
    // Found by `shell_like_strings`: the root's `[...]` and `?` made the deny rule a
    // glob that did not match its own spelling.
    assert_denying_roots_blocks(".%z[g~@Pu]\\\n?``5<z,z&&]:.\n\n");
}

/// A rule denying a command's root means the command is never allowed.
fn assert_denying_roots_blocks(command: &str) {
    let Ok(check) = check_command(command, &policy_of(ALL, NONE)) else {
        return;
    };
    for root in &check.roots {
        // Rule entries are split on whitespace and quotes; only plain names make rules.
        if root.is_empty() || root.contains(|c: char| c.is_whitespace() || "'\"\\()".contains(c)) {
            continue;
        }
        let deny = [root.as_str()];
        let denied = check_command(command, &policy_of(ALL, &deny)).expect("same size");
        assert_ne!(
            denied.decision, Allow,
            "{command:?} with {root:?} denied: {}",
            denied.reason
        );
    }
}

#[test]
fn denying_any_root_of_a_table_command_blocks_it() {
    for (command, ..) in CASES {
        assert_denying_roots_blocks(command);
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Characters that matter to bash, so random text exercises the grammar.
    const SHELLY: &str = "[a-z0-9 $(){}'\"\\\\`<>|&;#\n\t=*?@P:!%^~,.\\[\\]-]{0,120}";

    fn check_bounded(command: &str) -> Result<(), TestCaseError> {
        let start = std::time::Instant::now();
        let check = check_command(command, &policy_of(ALL, NONE));
        prop_assert!(start.elapsed() < std::time::Duration::from_secs(2));
        if let Ok(check) = check {
            if check.has_substitution {
                prop_assert_eq!(check.decision, Deny);
            }
        }
        // Denying everything denies everything.
        let denied = check_command(command, &policy_of(ALL, ALL));
        prop_assert!(denied.map_or(true, |c| c.decision == Deny));
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_strings(command in any::<String>()) {
            check_bounded(&command)?;
        }

        #[test]
        fn shell_like_strings(command in SHELLY) {
            check_bounded(&command)?;
            assert_denying_roots_blocks(&command);
        }

        /// Table commands with characters inserted, deleted or replaced.
        #[test]
        fn mutated_table_commands(
            case in 0..CASES.len(),
            edits in proptest::collection::vec((any::<prop::sample::Index>(), 0..3u8, "[$(){}'\"\\\\`<>|&;#\n =a-z]"), 1..6),
        ) {
            let mut command: Vec<char> = CASES[case].0.chars().collect();
            for (at, op, text) in edits {
                let c = text.chars().next().unwrap_or('x');
                let i = if command.is_empty() { 0 } else { at.index(command.len()) };
                match op {
                    0 => command.insert(i, c),
                    1 if !command.is_empty() => { command.remove(i); }
                    _ if !command.is_empty() => command[i] = c,
                    _ => command.push(c),
                }
            }
            let command: String = command.into_iter().collect();
            check_bounded(&command)?;
            assert_denying_roots_blocks(&command);
        }
    }
}

/// Parse+check time per table command. Run in release:
/// `cargo test --release --lib policy::tests::bench_table -- --ignored --nocapture`
#[test]
#[ignore]
fn bench_table() {
    let runs = 500;
    let mut medians = Vec::new();
    let mut all = Vec::new();
    for (command, allow, deny, ..) in CASES {
        let policy = policy_of(allow, deny);
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let start = std::time::Instant::now();
                std::hint::black_box(check_command(command, &policy)).ok();
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        medians.push(times[runs / 2]);
        all.extend(times);
    }
    medians.sort_by(f64::total_cmp);
    all.sort_by(f64::total_cmp);
    let pct = |v: &[f64], p: usize| v[(v.len() - 1) * p / 100];
    println!(
        "{} commands x {runs} runs: median of per-command medians {:.1} µs; all runs: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max per-command median {:.1} µs",
        CASES.len(),
        pct(&medians, 50),
        pct(&all, 50),
        pct(&all, 90),
        pct(&all, 99),
        pct(&medians, 100)
    );
}
