//! Answers that hold under load and hostile input: many threads, pathological and
//! random commands, deny rules built from a command's own roots; and a timing bench.

use super::*;

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
/// `cargo test --release --lib policy::tests::robustness::bench_table -- --ignored --nocapture`
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
