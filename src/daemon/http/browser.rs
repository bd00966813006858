//! What a web page may make the user's browser send to this port: nothing that reads,
//! writes or runs anything. The daemon serves programs (E2B's SDKs, MCP clients, our
//! own client), never pages, and grants no CORS: no response carries an
//! `Access-Control-Allow-*` header, so a page of another origin can neither read an
//! answer nor send a request that needs a preflight. Three doors stay, each closed here
//! (docs/remote.md "Web pages", SECURITY.md "The daemon's doors"):
//!
//! - **DNS rebinding** ([`host_allowed`]): a page on `evil.example` whose name is then
//!   pointed at 127.0.0.1 is same-origin with this port: its requests carry no
//!   foreign `Origin` (a same-origin GET carries none at all) but do carry
//!   `Host: evil.example:PORT`. So without a token, a request's `Host` must be a name
//!   no attacker's DNS answers for: `localhost`, an IP literal (no DNS is asked, so
//!   nothing can rebind), or one of `--allowed-host`. `*.localhost` is not taken by
//!   default: browsers resolve it to loopback themselves, but a stub resolver may ask
//!   the network's DNS, which whoever runs the network answers. With a token, `Host` is
//!   not checked: a rebound page cannot know the token, so it reaches only `/health`,
//!   while a pod is legitimately reached by IP, service name or an ingress's name
//!   (kubelet probes `/health` with `Host` = the pod's IP).
//! - **Foreign pages** ([`origin_allowed`]): a browser's request that names its page's
//!   origin must name a loopback one (`localhost`, `127.0.0.0/8`, `[::1]`), this very
//!   IP address (the `Host` literal: a page from this machine's own address, which no
//!   rebinding can forge), or one of `--allowed-origin`; with a token or without. A
//!   request without `Origin` (every program) passes this check.
//! - **Requests a browser sends cross-site without asking** ([`preflighted`]): a form
//!   post or a `fetch(..., {mode: 'no-cors'})` needs no preflight when its method is
//!   GET, HEAD or POST, its `Content-Type` is absent, `text/plain`,
//!   `application/x-www-form-urlencoded` or `multipart/form-data`, and it adds no
//!   other header. Such a request from a loopback page (another local server, which
//!   the origin check lets by) would still be served. So without a token every
//!   request but a GET or HEAD of `/health` or `/files` (which change nothing, and whose
//!   answer a foreign page cannot read) must show something a browser sends only after
//!   a preflight, which this daemon refuses: another `Content-Type` (Connect's
//!   `application/json`, `application/proto`, `application/connect+*`, the SDKs'
//!   `application/octet-stream` uploads), or a header no page can add on its own:
//!   `E2b-Sandbox-Id` (both E2B SDKs send it on every envd request, including their
//!   `multipart/form-data` uploads), `Connect-Protocol-Version`, `Mcp-Session-Id`,
//!   `Mcp-Protocol-Version`, or `Upgrade: native-shell-service/1` (client/link.ts; a
//!   browser can send only `Upgrade: websocket`). With a token the token is that proof.
//!   Preflights themselves (`OPTIONS`) are refused.

use std::net::IpAddr;

use bytes::Bytes;
use hyper::header::{HeaderMap, CONTENT_TYPE, HOST, ORIGIN, UPGRADE};
use hyper::{Method, Response, StatusCode, Uri};

use super::upgrade::PROTOCOL_TOKEN;
use super::Listen;
use crate::daemon::protocol::body::{full, Body};

/// Headers that only a program, or a page after a preflight, can send: each proves
/// the request is not a cross-site form post or no-cors fetch.
const PROOF_HEADERS: &[&str] = &[
    "e2b-sandbox-id",
    "connect-protocol-version",
    "mcp-session-id",
    "mcp-protocol-version",
];

/// The `Content-Type`s a browser sends cross-site without a preflight (the Fetch
/// standard's CORS-safelisted request-header), by their essence.
const SIMPLE_CONTENT_TYPES: &[&str] = &["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"];

/// The checks that hold for every request, before the token's: the `Host` (without a
/// token), the `Origin`, and no preflight. `Err` is the refusal to send.
pub fn admit(method: &Method, uri: &Uri, headers: &HeaderMap, listen: &Listen) -> Result<(), Refusal> {
    if listen.token.is_none() {
        host_allowed(uri, headers, &listen.allowed_hosts).map_err(|why| Refusal::new("HOST_REFUSED", why))?;
    }
    origin_allowed(headers, &listen.allowed_origins).map_err(|why| Refusal::new("ORIGIN_REFUSED", why))?;
    if method == Method::OPTIONS {
        return Err(Refusal::new(
            "PREFLIGHT_REFUSED",
            "this daemon grants no CORS: web pages may not use it (docs/remote.md, \"Web pages\")",
        ));
    }
    Ok(())
}

/// Whether `Host` (and an absolute-form or HTTP/2 authority) names this daemon under a
/// name no DNS answer can make: the file's comment says why. A request with neither
/// is not a browser's (every browser sends `Host`) and passes.
pub fn host_allowed(uri: &Uri, headers: &HeaderMap, allowed: &[String]) -> Result<(), String> {
    let header = headers.get_all(HOST).iter().map(|v| v.to_str().ok());
    let authority = uri.authority().map(|a| Some(a.as_str()));
    for given in header.chain(authority) {
        let Some(given) = given else {
            return Err("the Host header is not text: refused (DNS rebinding guard)".to_owned());
        };
        let host = host_of(given);
        let named = host.eq_ignore_ascii_case("localhost")
            || host.parse::<IpAddr>().is_ok()
            || allowed.iter().any(|a| host_of(a).eq_ignore_ascii_case(host));
        if !named {
            return Err(format!(
                "Host {given} is not a name of this daemon (DNS rebinding guard): use localhost or an IP address, allow the name with --allowed-host {host}, or set --access-token-file"
            ));
        }
    }
    Ok(())
}

/// Whether a request's `Origin` may reach the daemon: the file's comment says why.
pub fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> Result<(), String> {
    let Some(origin) = headers.get(ORIGIN) else {
        return Ok(());
    };
    let refused = |o: &str| {
        Err(format!(
            "Origin {o} may not use this daemon (web pages are refused; DNS rebinding guard); allow it with --allowed-origin {o}"
        ))
    };
    let Ok(origin) = origin.to_str() else {
        return refused("(not text)");
    };
    let origin = origin.trim_end_matches('/');
    if allowed
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return Ok(());
    }
    // scheme://host[:port]; "null" (a sandboxed frame, a file) has no host and is refused.
    let Some((_, rest)) = origin.split_once("://") else {
        return refused(origin);
    };
    let host = host_of(rest);
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(());
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        if ip.is_loopback() {
            return Ok(());
        }
        // A page from this machine's own address: the request's Host names the same IP.
        let own = headers.get(HOST).and_then(|h| h.to_str().ok()).map(host_of);
        if own.and_then(|h| h.parse::<IpAddr>().ok()) == Some(ip) {
            return Ok(());
        }
    }
    refused(origin)
}

/// Without a token: whether the request is one a browser could have sent cross-site
/// without a preflight, refused unless it only reads (the file's comment says why).
pub fn preflighted(method: &Method, path: &str, headers: &HeaderMap) -> Result<(), Refusal> {
    let reads = (method == Method::GET || method == Method::HEAD) && (path == "/health" || path == "/files");
    if reads || proves_preflight(headers) {
        return Ok(());
    }
    Err(Refusal::new(
        "SIMPLE_REQUEST_REFUSED",
        "a request that can change something must show it is not a web page's form post or no-cors fetch: send the access token, a Content-Type other than text/plain, application/x-www-form-urlencoded or multipart/form-data, or an E2b-Sandbox-Id or Connect-Protocol-Version header (docs/remote.md, \"Web pages\")",
    ))
}

/// Whether the headers hold something a browser sends cross-site only after a
/// preflight.
fn proves_preflight(headers: &HeaderMap) -> bool {
    let types: Vec<_> = headers.get_all(CONTENT_TYPE).iter().collect();
    // Every Content-Type must be one a page cannot send unasked (a browser sends one).
    let typed = !types.is_empty() && types.iter().all(|v| !simple_content_type(v.as_bytes()));
    let named = PROOF_HEADERS.iter().any(|name| headers.contains_key(*name));
    let ours = headers
        .get_all(UPGRADE)
        .iter()
        .any(|v| v.as_bytes().eq_ignore_ascii_case(PROTOCOL_TOKEN.as_bytes()));
    typed || named || ours
}

/// Whether a `Content-Type` is one of the three a browser sends without a preflight.
/// Its essence is what precedes the first `;`, trimmed and lower-cased: the same one the
/// browser's MIME parser finds for any value it lets through unasked, so no value the
/// browser deems simple is taken as proof. A value that is not text counts as simple.
fn simple_content_type(value: &[u8]) -> bool {
    let Ok(value) = std::str::from_utf8(value) else {
        return true;
    };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    SIMPLE_CONTENT_TYPES.contains(&essence.as_str())
}

/// The host of `host[:port]` (an IPv6 literal without its brackets).
fn host_of(authority: &str) -> &str {
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

/// Why a request is refused; sent as 403 with `{"error": {"code", "message"}}`, which a
/// client can show.
#[derive(Debug)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            code,
            message: message.into(),
        }
    }

    pub fn into_response(self) -> Response<Body> {
        let body = serde_json::json!({ "error": { "code": self.code, "message": self.message } }).to_string();
        full(StatusCode::FORBIDDEN, "application/json", Bytes::from(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn with(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    fn host(host: &str, allowed: &[String]) -> Result<(), String> {
        host_allowed(&Uri::from_static("/files"), &with(&[("host", host)]), allowed)
    }

    #[test]
    fn hosts_are_localhost_ip_literals_or_the_list() {
        assert!(host("localhost:49983", &[]).is_ok());
        assert!(host("LocalHost", &[]).is_ok());
        assert!(host("127.0.0.1:8", &[]).is_ok());
        assert!(host("[::1]:8", &[]).is_ok());
        assert!(host("10.0.0.5:8", &[]).is_ok());
        assert!(host_allowed(&Uri::from_static("/"), &HeaderMap::new(), &[]).is_ok());
        // DNS rebinding: the attacker's name.
        assert!(host("evil.example:8", &[]).is_err());
        assert!(host("localhost.evil.example", &[]).is_err());
        assert!(host("app.localhost:8", &[]).is_err());
        assert!(host("localhost.:8", &[]).is_err());
        let list = ["devbox".to_owned()];
        assert!(host("devbox:8", &list).is_ok());
        assert!(host("DEVBOX", &list).is_ok());
        // An absolute-form request target (or HTTP/2's :authority) is held to the same rule.
        let uri: Uri = "http://evil.example:8/files".parse().unwrap();
        assert!(host_allowed(&uri, &with(&[("host", "127.0.0.1:8")]), &[]).is_err());
        let uri: Uri = "http://127.0.0.1:8/files".parse().unwrap();
        assert!(host_allowed(&uri, &HeaderMap::new(), &[]).is_ok());
    }

    #[test]
    fn browsers_are_held_to_loopback_this_address_or_the_list() {
        let o = |origin: &str, host: &str| with(&[("origin", origin), ("host", host)]);
        assert!(origin_allowed(&HeaderMap::new(), &[]).is_ok());
        assert!(origin_allowed(&o("http://localhost:3000", "127.0.0.1:8"), &[]).is_ok());
        assert!(origin_allowed(&o("http://127.0.0.1", "127.0.0.1:8"), &[]).is_ok());
        assert!(origin_allowed(&o("http://[::1]:5", "[::1]:8"), &[]).is_ok());
        assert!(origin_allowed(&o("http://10.0.0.5:3000", "10.0.0.5:8"), &[]).is_ok());
        assert!(origin_allowed(&o("http://evil.example:8", "evil.example:8"), &[]).is_err());
        assert!(origin_allowed(&o("http://10.0.0.6", "10.0.0.5:8"), &[]).is_err());
        assert!(origin_allowed(&o("null", "127.0.0.1:8"), &[]).is_err());
        assert!(origin_allowed(&o("http://localhost.evil.example", "127.0.0.1:8"), &[]).is_err());
        let list = ["https://ide.example".to_owned()];
        assert!(origin_allowed(&o("https://ide.example", "ide.example"), &list).is_ok());
    }

    #[test]
    fn what_a_page_sends_unasked_is_refused() {
        let post = |pairs: &[(&'static str, &str)]| preflighted(&Method::POST, "/files", &with(pairs)).is_ok();
        // What forms and no-cors fetches can send.
        assert!(!post(&[]));
        assert!(!post(&[("content-type", "text/plain;charset=UTF-8")]));
        assert!(!post(&[("content-type", " Multipart/Form-Data; boundary=x")]));
        assert!(!post(&[("content-type", "application/x-www-form-urlencoded")]));
        assert!(!post(&[
            ("content-type", "application/json"),
            ("content-type", "text/plain")
        ]));
        assert!(!post(&[("upgrade", "websocket")]));
        // What programs send.
        assert!(post(&[("content-type", "application/json")]));
        assert!(post(&[("content-type", "application/connect+proto")]));
        assert!(post(&[("content-type", "application/octet-stream")]));
        assert!(post(&[
            ("content-type", "multipart/form-data; boundary=x"),
            ("e2b-sandbox-id", "s")
        ]));
        assert!(post(&[("connect-protocol-version", "1")]));
        assert!(preflighted(&Method::GET, "/daemon", &with(&[("upgrade", PROTOCOL_TOKEN)])).is_ok());
        // Reads need no proof; every other GET does (Connect's GET calls included).
        assert!(preflighted(&Method::GET, "/files", &HeaderMap::new()).is_ok());
        assert!(preflighted(&Method::HEAD, "/health", &HeaderMap::new()).is_ok());
        assert!(preflighted(&Method::GET, "/filesystem.Filesystem/Remove", &HeaderMap::new()).is_err());
        assert!(preflighted(&Method::GET, "/mcp", &HeaderMap::new()).is_err());
    }

    /// The checks' cost on a request such as the SDKs send, printed, not asserted:
    /// `cargo test --release --lib cost_of_the_checks -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn cost_of_the_checks() {
        let listen = Listen {
            addr: "127.0.0.1:49983".parse().unwrap(),
            token: None,
            project_root: None,
            mcp_upstream: None,
            allowed_origins: vec![],
            allowed_hosts: vec![],
        };
        let headers = with(&[
            ("host", "localhost:49983"),
            ("user-agent", "e2b-js-sdk/2.51.0"),
            ("content-type", "multipart/form-data; boundary=----x"),
            ("e2b-sandbox-id", "debug_sandbox_id"),
            ("e2b-sandbox-port", "49983"),
        ]);
        let uri = Uri::from_static("/files?path=a.txt");
        let n = 1_000_000u32;
        let started = std::time::Instant::now();
        for _ in 0..n {
            let ok = admit(&Method::POST, &uri, &headers, &listen).is_ok()
                && preflighted(&Method::POST, "/files", &headers).is_ok();
            assert!(std::hint::black_box(ok));
        }
        println!("browser.rs checks: {:?} a request", started.elapsed() / n);
    }
}
