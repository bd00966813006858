//! Tests of `persist.rs`, kept apart so the module itself reads in one sitting.

use super::*;
use crate::output::job_dir::INFO_TMP_START;
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;

#[test]
fn info_rewrites_use_the_spare_made_ahead_and_leave_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("sess"), 7, false, 100).unwrap();
    let mut info = JobInfo {
        handle: 7,
        mode: "pty",
        ..info("running")
    };
    files.write_info(&info).unwrap();
    files.prepare_info_rewrite();
    let listing = |dir: &Path| {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(listing(files.dir()), [".info.json.tmp", "info.json", "stdout.txt"]);
    assert_eq!(fs::read(files.dir().join(INFO_TMP_FILE)).unwrap(), INFO_TMP_START);
    info.status = "exited";
    files.write_info(&info).unwrap();
    assert_eq!(listing(files.dir()), ["info.json", "stdout.txt"]);
    let read = fs::read_to_string(files.dir().join("info.json")).unwrap();
    assert!(read.contains("\"status\": \"exited\""), "{read}");
    // The primed byte was written over: the file is the JSON, whole.
    let parsed: serde_json::Value = serde_json::from_str(&read).expect("info.json is JSON");
    assert_eq!(parsed["status"], "exited");
    // A spare never used (the job was dropped before its exit) is removed.
    files.prepare_info_rewrite();
    let dir = files.dir().to_path_buf();
    drop(files);
    assert_eq!(listing(&dir), ["info.json", "stdout.txt"]);
}

#[test]
fn files_are_private_and_capped() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("s"), 1, true, 10).unwrap();
    let dir = files.dir().to_path_buf();
    assert_eq!(dir, tmp.path().join("s").join("1"));
    files.write(Stream::Stdout, "0123456789abc");
    files.write(Stream::Stderr, "more");
    files.finish();
    let out = fs::read_to_string(dir.join("stdout.txt")).unwrap();
    assert!(out.starts_with("0123456789\n[... the per-job disk cap of 10 bytes was reached; 7 more"));
    // The cap is said, and no file is named as holding everything.
    assert!(!files.whole());
    let said = files.persist_error().unwrap();
    assert!(
        said.contains("disk cap of 10 bytes") && said.contains("7 more bytes"),
        "{said}"
    );
    #[cfg(unix)]
    assert_eq!(
        fs::metadata(dir.join("stdout.txt")).unwrap().permissions().mode() & 0o777,
        0o600
    );
    #[cfg(unix)]
    assert_eq!(fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
}

// Symlinks need a privilege on Windows that tests cannot count on.
#[cfg(unix)]
#[test]
fn a_taken_or_planted_name_is_never_reused() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    let first = JobFiles::create(&session, 1, false, 100).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, session.join("2")).unwrap();
    let again = JobFiles::create(&session, 1, false, 100).unwrap();
    let planted = JobFiles::create(&session, 2, false, 100).unwrap();
    assert_eq!(first.dir(), session.join("1"));
    assert_eq!(again.dir(), session.join("1-2"));
    assert_eq!(planted.dir(), session.join("2-2"));
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}

fn info(status: &'static str) -> JobInfo {
    JobInfo {
        handle: 1,
        pid: Some(1),
        command: "true".into(),
        args: None,
        description: None,
        directory: ".".into(),
        mode: "pipes",
        status,
        start_time: 0,
        end_time: None,
        exit_code: None,
        signal: None,
        error: None,
        persist_error: None,
    }
}

// Unix only: on Windows a folder whose files are open cannot be removed, so this
// fault cannot happen there the way it does here.
#[cfg(unix)]
#[test]
fn a_removed_folder_is_seen_said_and_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("s"), 1, true, 1000).unwrap();
    files.write(Stream::Stdout, "out\n");
    files.write(Stream::Stderr, "err\n");
    files.write_info(&info("running")).unwrap();
    files.prepare_info_rewrite();
    files.check();
    assert!(files.whole());
    assert_eq!((files.persist_error(), files.stdout_text_len()), (None, 4));
    fs::remove_dir_all(files.dir()).unwrap();
    files.finish();
    assert!(!files.whole());
    assert_eq!(files.stdout_text_len(), 0);
    let said = files.persist_error().unwrap();
    assert!(said.contains("folder") && said.contains("was removed"), "{said}");
    // The last info.json has nowhere to go; nothing is made again.
    assert!(files.write_info(&info("exited")).is_err());
    drop(files);
    assert!(!tmp.path().join("s").join("1").exists());
}

#[cfg(unix)]
#[test]
fn a_removed_folder_is_said_so_when_info_json_meets_it_first() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("s"), 1, true, 1000).unwrap();
    files.write(Stream::Stdout, "out\n");
    files.write_info(&info("running")).unwrap();
    files.prepare_info_rewrite();
    fs::remove_dir_all(files.dir()).unwrap();
    assert!(files.write_info(&info("running")).is_err());
    let said = files.persist_error().unwrap();
    assert!(said.contains("folder") && said.contains("was removed"), "{said}");
}

#[test]
fn a_replaced_or_cut_file_is_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("s"), 1, false, 1000).unwrap();
    files.write(Stream::Stdout, "0123456789\n");
    fs::write(files.stdout_path(), "0123").unwrap();
    files.check();
    let said = files.persist_error().unwrap();
    assert!(said.contains("was cut to 4 of its 11 bytes"), "{said}");
    // Its start is still read there.
    assert_eq!(files.stdout_text_len(), 4);

    let mut files = JobFiles::create(&tmp.path().join("s"), 2, false, 1000).unwrap();
    files.write(Stream::Stdout, "0123456789\n");
    // A read that finds less than was written: told where the text ends.
    files.text_ends_at(3);
    assert_eq!(files.stdout_text_len(), 3);
    assert!(files.persist_error().unwrap().contains("holds only 3 bytes"));
}

#[cfg(unix)]
#[test]
fn a_file_put_in_the_place_of_the_job_file_is_not_taken_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("s"), 1, false, 1000).unwrap();
    files.write(Stream::Stdout, "abc\n");
    fs::remove_file(files.stdout_path()).unwrap();
    fs::write(files.stdout_path(), "abc\nmore\n").unwrap();
    files.check();
    assert!(files.persist_error().unwrap().contains("another file put in its place"));
}

/// Descriptors of this process open on `path`.
#[cfg(target_os = "linux")]
fn open_on(path: &Path) -> usize {
    fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target == path)
        .count()
}

/// A quiet job holds no descriptor of its files; its next write opens `stdout.txt`
/// again and goes on where the last one ended.
#[cfg(target_os = "linux")]
#[test]
fn a_quiet_job_holds_no_descriptor_of_its_files_and_goes_on_where_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("s"), 1, false, 1000).unwrap();
    let path = files.stdout_path().canonicalize().unwrap();
    // Made, and let go at once: a job that prints nothing holds none.
    assert_eq!(open_on(&path), 0);
    files.write(Stream::Stdout, "one\n");
    assert_eq!(open_on(&path), 1);
    files.idle();
    assert_eq!(open_on(&path), 0);
    files.write(Stream::Stdout, "two\n");
    files.finish();
    assert_eq!(fs::read_to_string(&path).unwrap(), "one\ntwo\n");
    assert_eq!(files.persist_error(), None);
    files.close();
    assert_eq!(open_on(&path), 0);
}

/// A file put in the place of `stdout.txt` while the job was quiet is never opened
/// as the job's: nothing is written to it, and the result says why.
#[cfg(unix)]
#[test]
fn a_file_put_in_the_place_of_a_let_go_file_is_not_written() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("s"), 1, false, 1000).unwrap();
    files.write(Stream::Stdout, "abc\n");
    files.idle();
    fs::remove_file(files.stdout_path()).unwrap();
    fs::write(files.stdout_path(), "planted\n").unwrap();
    files.write(Stream::Stdout, "more\n");
    assert_eq!(fs::read_to_string(files.stdout_path()).unwrap(), "planted\n");
    assert!(files.persist_error().unwrap().contains("another file put in its place"));
    // A link planted there is not followed either.
    let mut files = JobFiles::create(&tmp.path().join("s"), 2, false, 1000).unwrap();
    files.write(Stream::Stdout, "abc\n");
    files.idle();
    let target = tmp.path().join("elsewhere");
    fs::write(&target, "").unwrap();
    fs::remove_file(files.stdout_path()).unwrap();
    std::os::unix::fs::symlink(&target, files.stdout_path()).unwrap();
    files.write(Stream::Stdout, "more\n");
    assert_eq!(fs::read_to_string(&target).unwrap(), "");
    assert!(files.persist_error().is_some());
}

#[test]
fn a_last_info_that_cannot_replace_the_old_is_written_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = JobFiles::create(&tmp.path().join("s"), 1, false, 1000).unwrap();
    files.write_info(&info("running")).unwrap();
    // The temporary file's name is taken (a directory): the rename path fails.
    fs::create_dir(files.dir().join(INFO_TMP_FILE)).unwrap();
    assert!(files.write_info(&info("exited")).is_err());
    let read = fs::read_to_string(files.dir().join(INFO_FILE)).unwrap();
    assert!(read.contains("\"status\": \"exited\""), "{read}");
    assert!(files
        .persist_error()
        .unwrap()
        .contains("info.json could not be written"));
}

#[test]
fn a_primed_info_tmp_holds_its_first_byte_only_whatever_was_there() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(INFO_TMP_FILE);
    // Missing, a finished job's `info.json`, something else, and primed already.
    for before in [
        None,
        Some(&b"{\n  \"handle\": 1\n}"[..]),
        Some(&b"[1, 2]"[..]),
        Some(INFO_TMP_START),
    ] {
        if let Some(bytes) = before {
            fs::write(&path, bytes).unwrap();
        }
        prime_info_tmp(&path).unwrap();
        assert_eq!(fs::read(&path).unwrap(), INFO_TMP_START, "from {before:?}");
        fs::remove_file(&path).unwrap();
    }
    // Never through a link.
    #[cfg(unix)]
    {
        let target = tmp.path().join("elsewhere");
        fs::write(&target, "{ mine }").unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(prime_info_tmp(&path).is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "{ mine }");
    }
}
