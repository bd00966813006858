//! Where a restart in place cannot carry jobs (not Linux: src/daemon/carry.rs is
//! Linux's): the hand-over's record of jobs is always empty, and a daemon holding any
//! job refuses the restart before anything stops.

use std::os::fd::{OwnedFd, RawFd};

use serde::{Deserialize, Serialize};

use super::state::State;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CarriedDaemon {}

impl CarriedDaemon {
    pub fn job_count(&self) -> usize {
        0
    }

    pub fn fds(&self) -> Vec<i32> {
        Vec::new()
    }

    pub fn unwritten_input(&self) -> (usize, usize) {
        (0, 0)
    }
}

pub fn precheck(state: &State, _face_started: Option<&[super::envd::carried::CarriedStart]>) -> Result<(), String> {
    match state
        .all_services()
        .iter()
        .map(|s| s.service.handles().len())
        .sum::<usize>()
    {
        0 => Ok(()),
        n => Err(format!(
            "the daemon holds {n} job(s), and only Linux carries jobs across a restart"
        )),
    }
}

pub async fn freeze(_state: &State) -> Result<(), String> {
    Ok(())
}

pub fn thaw(_state: &State) {}

pub fn carry(
    state: &State,
    _face_started: Option<Vec<super::envd::carried::CarriedStart>>,
) -> Result<(CarriedDaemon, Vec<OwnedFd>), String> {
    precheck(state, None).map(|()| (CarriedDaemon::default(), Vec::new()))
}

pub fn watchdog_fd() -> Option<RawFd> {
    None
}

pub fn check_records(_carried: &CarriedDaemon) -> Result<(), String> {
    Ok(())
}

pub fn resume(
    _state: &State,
    _carried: CarriedDaemon,
    _runtime: &tokio::runtime::Handle,
    _take: &mut dyn FnMut(RawFd) -> Result<OwnedFd, String>,
) -> Result<(), String> {
    Ok(())
}
