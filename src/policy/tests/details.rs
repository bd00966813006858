//! What a check reports besides its decision: the flags, the simple commands, the
//! size limit and the serialised form.

use super::*;

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
