//! Tests of `spare_dir.rs`: a finished folder emptied into a spare, and a job's files
//! made from it.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::output::persist::{JobFiles, JobInfo, Stream};

fn info(handle: u32, status: &'static str) -> JobInfo {
    JobInfo {
        handle,
        pid: None,
        command: "x".into(),
        args: None,
        description: None,
        directory: ".".into(),
        mode: "pipes",
        status,
        start_time: 0,
        end_time: None,
        exit_code: Some(0),
        signal: None,
        error: None,
        persist_error: None,
    }
}

/// A finished job's folder in pipes mode: `stdout.txt`, `stderr.txt`, `info.json`.
fn finished(session: &Path, handle: u32) -> PathBuf {
    let mut files = JobFiles::create(session, handle, true, 1000).unwrap();
    files.write(Stream::Stdout, "old out\n");
    files.write(Stream::Stderr, "old err\n");
    files.finish();
    files.write_info(&info(handle, "exited")).unwrap();
    files.dir().to_path_buf()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn inode(path: &Path) -> u64 {
    fs::symlink_metadata(path).unwrap().ino()
}

#[test]
fn a_finished_folder_becomes_an_empty_spare_then_the_next_jobs_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    let old = finished(&session, 1);
    let old_stdout = inode(&old.join("stdout.txt"));
    let spare = scrub(&old, &session.join(".spare-t-1")).unwrap();
    // The finished job's name is gone at once; the spare holds an empty `stdout.txt`
    // and the next `info.json`'s temporary file, primed with its first byte.
    assert!(old.symlink_metadata().is_err());
    assert_eq!(names(spare.path()), [".info.json.tmp", "stdout.txt"]);
    assert_eq!(fs::metadata(spare.path().join("stdout.txt")).unwrap().len(), 0);
    assert_eq!(fs::read(spare.path().join(".info.json.tmp")).unwrap(), b"{");
    let mut files = JobFiles::create_reusing(&session, 2, false, 1000, Some(spare)).unwrap();
    assert_eq!(files.dir(), session.join("2"));
    assert_eq!(inode(&files.dir().join("stdout.txt")), old_stdout, "the file is reused");
    files.write(Stream::Stdout, "new\n");
    files.finish();
    files.write_info(&info(2, "exited")).unwrap();
    assert!(files.whole(), "{:?}", files.persist_error());
    assert_eq!(names(files.dir()), ["info.json", "stdout.txt"]);
    assert_eq!(fs::read_to_string(files.dir().join("stdout.txt")).unwrap(), "new\n");
    // Written over the primed byte: the JSON whole, nothing before or after it.
    let info_text = fs::read_to_string(files.dir().join("info.json")).unwrap();
    assert!(info_text.contains("\"handle\": 2"), "{info_text}");
    let parsed: serde_json::Value = serde_json::from_str(&info_text).expect("info.json is JSON");
    assert_eq!(parsed["status"], "exited");
    assert_eq!(names(&session), ["2"]);
}

#[test]
fn a_spare_takes_no_name_already_there_and_a_pipes_job_gets_its_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    let spare = scrub(&finished(&session, 1), &session.join(".spare-t-1")).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, session.join("5")).unwrap();
    let mut files = JobFiles::create_reusing(&session, 5, true, 1000, Some(spare)).unwrap();
    assert_eq!(files.dir(), session.join("5-2"));
    assert!(
        fs::read_dir(&elsewhere).unwrap().next().is_none(),
        "nothing went through the link"
    );
    files.write(Stream::Stderr, "e\n");
    files.finish();
    assert_eq!(fs::read_to_string(files.dir().join("stderr.txt")).unwrap(), "e\n");
    assert!(files.whole(), "{:?}", files.persist_error());
}

#[test]
fn a_folder_holding_anything_else_is_not_made_a_spare_and_nothing_is_left() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    let old = finished(&session, 1);
    fs::write(old.join("mine.txt"), "not a job's").unwrap();
    let spare = session.join(".spare-t-1");
    assert!(scrub(&old, &spare).is_none());
    assert!(old.symlink_metadata().is_err() && spare.symlink_metadata().is_err());
    // A link in place of a job's file: the same.
    let old = finished(&session, 2);
    fs::remove_file(old.join("stdout.txt")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("target"), old.join("stdout.txt")).unwrap();
    assert!(scrub(&old, &spare).is_none());
    assert!(!tmp.path().join("target").exists());
    assert!(old.symlink_metadata().is_err() && spare.symlink_metadata().is_err());
}

#[test]
fn a_file_put_in_a_spares_place_is_told_from_the_spares_own() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    let spare = scrub(&finished(&session, 1), &session.join(".spare-t-1")).unwrap();
    fs::remove_file(spare.path().join("stdout.txt")).unwrap();
    fs::write(spare.path().join("stdout.txt"), "").unwrap();
    let mut files = JobFiles::create_reusing(&session, 2, false, 1000, Some(spare)).unwrap();
    files.write(Stream::Stdout, "x\n");
    let said = files.persist_error().expect("the replaced file is seen");
    assert!(said.contains("another file put in its place"), "{said}");
}

#[test]
fn the_spares_a_dead_service_left_are_removed_with_its_session() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    scrub(&finished(&session, 1), &session.join(".spare-t-1")).unwrap();
    fs::create_dir(session.join("notes")).unwrap();
    remove_left_spares(&session);
    assert_eq!(names(&session), ["notes"]);
}
