//! What a restart in place (src/daemon/carry.rs) carries of the envd face besides its
//! service: for each job its `Start` made, the tag and the process config it was
//! started with (what `List` answers and a `Connect` or `SendInput` by tag finds).

use serde::{Deserialize, Serialize};

use super::proto::process as pb;

/// One job the face started, as its `Start` asked for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedStart {
    /// The face's service's handle of the job.
    pub handle: u32,
    pub tag: Option<String>,
    pub config: pb::ProcessConfig,
}
