//! Names of users and groups by id, through the C library (so NSS sources such as LDAP
//! count, as they do for `ls -l`). The daemon's file calls report a file's owner by name.

use std::ffi::CStr;

/// Large enough for the C library's scratch space for one passwd or group entry; a
/// group with very many members can exceed it, and is then reported by number.
const SCRATCH: usize = 16 * 1024;

/// The name of the user with this id, or None when the user database has none.
pub fn user_name(uid: u32) -> Option<String> {
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut scratch = vec![0 as libc::c_char; SCRATCH];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to memory this frame owns, sized as passed; the result
    // points into `entry` and `scratch`, which outlive its use below.
    let rc = unsafe { libc::getpwuid_r(uid, &mut entry, scratch.as_mut_ptr(), scratch.len(), &mut found) };
    if rc != 0 || found.is_null() || entry.pw_name.is_null() {
        return None;
    }
    // SAFETY: a successful call leaves pw_name a NUL-terminated string in `scratch`.
    Some(unsafe { CStr::from_ptr(entry.pw_name) }.to_string_lossy().into_owned())
}

/// The name of the group with this id, or None when the group database has none.
pub fn group_name(gid: u32) -> Option<String> {
    let mut entry: libc::group = unsafe { std::mem::zeroed() };
    let mut scratch = vec![0 as libc::c_char; SCRATCH];
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: as in user_name.
    let rc = unsafe { libc::getgrgid_r(gid, &mut entry, scratch.as_mut_ptr(), scratch.len(), &mut found) };
    if rc != 0 || found.is_null() || entry.gr_name.is_null() {
        return None;
    }
    // SAFETY: as in user_name.
    Some(unsafe { CStr::from_ptr(entry.gr_name) }.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_has_a_name_and_an_unused_id_has_none() {
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert!(group_name(0).is_some());
        assert_eq!(user_name(4_000_000_000), None);
    }
}
