//! `native-shell-daemon [--socket PATH] [--idle-exit-ms N] [--listen HOST:PORT
//! [--access-token-file FILE] [--project-root DIR] [--mcp-upstream SOCKET] [--allowed-origin ORIGIN]... [--allowed-host NAME]... [--mcp-server PROGRAM [--mcp-arg ARG]...]] [--require-sandbox] [--exit-with-stdin]`: the
//! per-user daemon that owns jobs for clients that come and go (src/daemon/), and with
//! `--listen` serves them over HTTP too (src/daemon/http/). `--stop` asks the one on the
//! socket to exit (its jobs are killed); `--restart` has it replace its image with the
//! binary on disk, in place (src/daemon/upgrade/). This file is the binary's crate root (Cargo.toml
//! `[[bin]]`), not a module of the library's `daemon`. Exit status: 0 when it served
//! and ended (or another daemon already serves the socket), 2 for bad arguments or an
//! unsupported platform, 1 when it could not serve (`--require-sandbox` where no job
//! can be sandboxed included: src/daemon/startup.rs).

#[cfg(unix)]
fn main() {
    use std::time::Duration;

    use native_shell_service::daemon;

    if let Some(version) = option_env!("NATIVE_SHELL_BUILD_VERSION") {
        daemon::stamp_version(version);
    }

    let mut socket = None;
    let mut idle_exit = daemon::DEFAULT_IDLE_EXIT;
    let mut stop = false;
    let mut listen: Option<std::net::SocketAddr> = None;
    let mut token_file: Option<std::path::PathBuf> = None;
    let mut project_root: Option<std::path::PathBuf> = None;
    let mut mcp_upstream: Option<std::path::PathBuf> = None;
    let mut allowed_origins = Vec::new();
    let mut allowed_hosts = Vec::new();
    let mut exit_with_stdin = false;
    let mut restart = false;
    let mut handover_check = false;
    let mut handover_fd: Option<i32> = None;
    let mut require_sandbox = false;
    let mut mcp_program: Option<std::path::PathBuf> = None;
    let mut mcp_args = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--socket" => socket = args.next().map(std::path::PathBuf::from),
            "--idle-exit-ms" => match args.next().and_then(|v| v.parse::<u64>().ok()) {
                Some(ms) => idle_exit = Duration::from_millis(ms),
                None => usage("--idle-exit-ms takes a whole number of milliseconds"),
            },
            "--listen" => match args.next().as_deref().map(listen_addr) {
                Some(Ok(addr)) => listen = Some(addr),
                Some(Err(message)) => usage(&message),
                None => usage("--listen takes HOST:PORT (or a port: 127.0.0.1)"),
            },
            "--access-token-file" => token_file = args.next().map(std::path::PathBuf::from),
            "--project-root" => project_root = args.next().map(std::path::PathBuf::from),
            "--mcp-upstream" => mcp_upstream = args.next().map(std::path::PathBuf::from),
            "--allowed-origin" => match args.next() {
                Some(origin) => allowed_origins.push(origin),
                None => usage("--allowed-origin takes an origin (https://host[:port])"),
            },
            "--allowed-host" => match args.next() {
                Some(host) if !host.is_empty() => allowed_hosts.push(host),
                _ => usage("--allowed-host takes a host name (a Host the daemon answers without a token)"),
            },
            "--exit-with-stdin" => exit_with_stdin = true,
            "--require-sandbox" => require_sandbox = true,
            "--mcp-server" => match args.next() {
                Some(program) if !program.is_empty() => mcp_program = Some(program.into()),
                _ => usage("--mcp-server takes the program that serves `mcp-upstream` (native-shell-service)"),
            },
            "--mcp-arg" => match args.next() {
                Some(arg) => mcp_args.push(arg),
                None => usage("--mcp-arg takes one argument for the MCP server (--mcp-arg --sandbox)"),
            },
            "--stop" => stop = true,
            "--restart" => restart = true,
            // A restart's pre-flight and its new image (src/daemon/upgrade/exec.rs).
            "--handover-check" => handover_check = true,
            "--handover-fd" => match args.next().and_then(|v| v.parse::<i32>().ok()) {
                Some(fd) => handover_fd = Some(fd),
                None => usage("--handover-fd takes a descriptor number"),
            },
            "--version" => {
                println!("{}", daemon::version());
                return;
            }
            "-h" | "--help" => {
                println!("usage: native-shell-daemon [--socket PATH] [--idle-exit-ms N] [--stop] [--restart] [--listen HOST:PORT [--access-token-file FILE] [--project-root DIR] [--mcp-upstream SOCKET] [--allowed-origin ORIGIN]... [--allowed-host NAME]... [--mcp-server PROGRAM [--mcp-arg ARG]...]] [--require-sandbox] [--exit-with-stdin]");
                return;
            }
            other => usage(&format!("unknown argument {other:?}")),
        }
    }
    if handover_check {
        // Reads a hand-over on stdin: `ready VERSION` if this build can take it over.
        use std::io::Read;
        let mut bytes = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
            eprintln!("native-shell-daemon: HANDOVER_INVALID: cannot read the hand-over: {e}");
            std::process::exit(1);
        }
        match daemon::upgrade::Handover::decode(&bytes) {
            Ok(_) => println!("ready {}", daemon::version()),
            Err(e) => {
                eprintln!("native-shell-daemon: {}: {e}", e.code());
                std::process::exit(1);
            }
        }
        return;
    }
    if restart {
        let socket = socket.unwrap_or_else(daemon::default_socket);
        match daemon::upgrade::client::restart(&socket) {
            Ok(done) => eprintln!(
                "native-shell-daemon: the daemon on {} restarted in place (pid {}): {} -> {}",
                socket.display(),
                done.pid,
                done.from,
                done.to
            ),
            Err((code, message)) => {
                eprintln!("native-shell-daemon: {code}: {message}");
                std::process::exit(1);
            }
        }
        return;
    }
    if stop {
        let socket = socket.unwrap_or_else(daemon::default_socket);
        match daemon::stop(&socket) {
            Ok(true) => eprintln!("native-shell-daemon: the daemon on {} has exited", socket.display()),
            Ok(false) => eprintln!("native-shell-daemon: no daemon on {}", socket.display()),
            Err(message) => {
                eprintln!("native-shell-daemon: {message}");
                std::process::exit(1);
            }
        }
        return;
    }
    // Holds no directory busy (a client's project may be unmounted or removed); every
    // service names its project root.
    let _ = std::env::set_current_dir("/");
    let token = match token_file.as_deref().map(daemon::read_token_file) {
        Some(Ok(token)) => Some(token),
        Some(Err(message)) => {
            eprintln!("native-shell-daemon: {message}");
            std::process::exit(1);
        }
        None => None,
    };
    if mcp_program.is_some() && (listen.is_none() || mcp_upstream.is_some()) {
        usage("--mcp-server needs --listen, and replaces --mcp-upstream");
    }
    if mcp_program.is_none() && !mcp_args.is_empty() {
        usage("--mcp-arg is for --mcp-server");
    }
    let listen = listen.map(|addr| daemon::Listen {
        addr,
        token,
        project_root,
        mcp_upstream,
        allowed_origins,
        allowed_hosts,
    });
    // An image that replaces the daemon's previous one: a hand-over it cannot read
    // ends it here, before it serves (the old image checked this build can read it).
    let handover = match handover_fd.map(daemon::upgrade::resume::load) {
        Some(Ok(handover)) => Some(handover),
        Some(Err(message)) => {
            eprintln!("native-shell-daemon: {message}");
            std::process::exit(1);
        }
        None => None,
    };
    let config = daemon::Config {
        socket: socket.unwrap_or_else(daemon::default_socket),
        idle_exit,
        listen,
        exit_with_stdin,
        handover,
        require_sandbox,
        mcp_server: mcp_program.map(|program| daemon::McpServer {
            program,
            args: mcp_args,
        }),
    };
    match daemon::run(config) {
        Ok(daemon::Ended::Done) => {}
        Ok(daemon::Ended::AlreadyRunning) => eprintln!("native-shell-daemon: another daemon serves this socket"),
        Err(message) => {
            eprintln!("native-shell-daemon: {message}");
            std::process::exit(1);
        }
    }
}

/// `HOST:PORT`, `[v6]:PORT`, or a bare port on 127.0.0.1. Names are resolved (the first
/// address): `localhost:49983`.
#[cfg(unix)]
fn listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(port) = text.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| format!("--listen {text:?}: not HOST:PORT"))
}

#[cfg(unix)]
fn usage(message: &str) -> ! {
    eprintln!("native-shell-daemon: {message}\nusage: native-shell-daemon [--socket PATH] [--idle-exit-ms N] [--stop] [--restart] [--listen HOST:PORT [--access-token-file FILE] [--project-root DIR] [--mcp-upstream SOCKET] [--allowed-origin ORIGIN]... [--allowed-host NAME]... [--mcp-server PROGRAM [--mcp-arg ARG]...]] [--require-sandbox] [--exit-with-stdin]");
    std::process::exit(2);
}

#[cfg(not(unix))]
fn main() {
    // Named pipes are for later: clients report DAEMON_UNAVAILABLE here.
    eprintln!("native-shell-daemon: DAEMON_UNAVAILABLE: the daemon runs on Linux and macOS only for now");
    std::process::exit(2);
}
