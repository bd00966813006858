//! Measures `check_command` (parse + check) per command, and explains single commands.
//!
//! ```text
//! cargo run --release --example policy_bench                 # timing table
//! cargo run --release --example policy_bench -- --explain 'sudo rm -rf x' [--allow git] [--deny rm]
//! cargo run --release --example policy_bench -- --explain - < script.sh
//! ```
//! The unit tests have a similar benchmark over the whole policy table:
//! `cargo test --release --lib policy::tests::bench_table -- --ignored --nocapture`.

use std::time::Instant;

use native_shell_service::policy::{check_command, CommandPolicy, MAX_COMMAND_BYTES};

/// Commands of the kind an agent runs, from short to long.
const COMMANDS: &[&str] = &[
    "ls -la",
    "git status",
    "git diff --stat HEAD~1",
    "cargo test --release 2>&1 | tail -20",
    "npm run build && npm test",
    "FOO=1 BAR=2 make -j4 all",
    "find . -name '*.rs' -exec grep -l 'unsafe' {} \\;",
    "sudo -u postgres psql -c 'select 1'",
    "bash -c \"git push && rm -rf build\"",
    "grep -rn 'TODO' src | sort | uniq -c | sort -rn | head",
    "for f in *.txt; do echo \"$f\"; wc -l \"$f\"; done",
    "if [ -f Cargo.toml ]; then cargo build; else make; fi",
    "echo $(whoami)",
    "cat > notes.md <<'EOF'\n# Notes\nRun `make` then $(check).\nEOF",
    "python3 - <<'EOF'\nimport sys\nfor i in range(3):\n    print(i)\nEOF",
    "docker run --rm -v \"$PWD:/src\" -w /src rust:1 cargo test -- --nocapture",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--explain") {
        explain(&args[1..]);
        return;
    }
    let policy = CommandPolicy {
        exclude_tools: vec!["run_shell_command(rm)".into()],
        core_tools: vec!["run_shell_command(git)".into(), "run_shell_command(ls)".into()],
        session_approvals: vec![],
    };
    // Warm up the thread's parser (created once per thread).
    let _ = check_command("true", &policy);
    println!("{:>10}  {:>10}  command", "median µs", "p99 µs");
    let mut all = Vec::new();
    for command in COMMANDS {
        let mut times = time(command, &policy, 2000);
        all.extend_from_slice(&times);
        times.sort_by(f64::total_cmp);
        println!(
            "{:>10.1}  {:>10.1}  {}",
            median(&times),
            times[times.len() * 99 / 100],
            command.replace('\n', "\\n")
        );
    }
    all.sort_by(f64::total_cmp);
    println!(
        "{:>10.1}  {:>10.1}  (all of the above)",
        median(&all),
        all[all.len() * 99 / 100]
    );

    // The worst case the size limit allows: a script of the largest size.
    let line = "git status --short && cargo build --release 2>&1 | tail -n 20 # check\n";
    let big = line.repeat(MAX_COMMAND_BYTES / line.len());
    let mut times = time(&big, &policy, 20);
    times.sort_by(f64::total_cmp);
    println!(
        "{:>10.1}  {:>10.1}  ({} KiB script, {} lines)",
        median(&times),
        times[times.len() - 1],
        big.len() / 1024,
        big.lines().count()
    );
}

fn time(command: &str, policy: &CommandPolicy, runs: usize) -> Vec<f64> {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let check = check_command(command, policy);
            let elapsed = start.elapsed().as_secs_f64() * 1e6;
            std::hint::black_box(check).ok();
            elapsed
        })
        .collect()
}

fn median(sorted: &[f64]) -> f64 {
    sorted[sorted.len() / 2]
}

fn explain(args: &[String]) {
    let mut policy = CommandPolicy::default();
    let mut command = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--allow" => policy
                .core_tools
                .extend(it.next().map(|v| format!("run_shell_command({v})"))),
            "--deny" => policy
                .exclude_tools
                .extend(it.next().map(|v| format!("run_shell_command({v})"))),
            // `-` reads the command from stdin (for commands longer than argv allows).
            "-" => command = std::io::read_to_string(std::io::stdin()).ok(),
            _ => command = Some(a.clone()),
        }
    }
    match check_command(command.as_deref().unwrap_or(""), &policy) {
        Ok(check) => println!("{}", serde_json::to_string_pretty(&check).unwrap_or_default()),
        Err(e) => println!("error: {e}"),
    }
}
