//! What the network face's handlers answer with, shared by the router (src/daemon/http/)
//! and the E2B services (src/daemon/envd/) and importing neither: HTTP reply bodies
//! (`body`) and the Connect protocol's framing, codecs and errors (`connect`).

pub mod body;
pub mod connect;
