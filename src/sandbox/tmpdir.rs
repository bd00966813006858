//! A sandboxed job's own temporary directory, its `TMPDIR`: made before the job starts
//! (mode 0700), gone from the job's reach once nothing of the job runs.
//!
//! **Where.** Inside one directory of the process's own, the *private base*
//! (`<parent>/native-shell-<pid>-<n>`, 0700), never in the shared `/tmp`: every
//! sandboxed job may write `/tmp` (`crate::sandbox::SHARED_TMP`), and Landlock grants
//! whole trees, so a directory under it is writable by every job however its mode is
//! set. A job there could replace a spare with a symlink to `$HOME` that a later job's
//! rule would follow, or write into a running job's TMPDIR. The parent is the first of
//! `$TMPDIR`, `/var/tmp`, `$XDG_RUNTIME_DIR`, `~/.cache` that `/tmp`'s rule does not
//! reach; a sandbox whose own writable paths reach the base, or lie inside it, is
//! refused (src/service/sandbox.rs, with `base_reached_through` and `base_id`).
//!
//! **By descriptor.** The base is held open (`Anchor`); each directory is made with
//! `mkdirat` in it, opened with `O_NOFOLLOW` (`Anchor::open_beneath`), and its rule is
//! built from that descriptor, never from its name. Before a spare is handed out, the
//! name is checked to still be that directory (device and inode).
//!
//! **Reused only when nothing of its job can be left.** A process a job left behind
//! keeps its Landlock rule on its TMPDIR's inode, and would reach a later job's files
//! in it under any name. So a finished job's directory is kept for a later job only
//! when no process of the job can be left: its cgroup held all it started and is
//! empty (`release(true)`), or, where no cgroup holds the job, the kernel says that no
//! process carrying the job's confinement exists any more (`watch`: on Linux its
//! seccomp filter's listener, src/platform/linux/sandbox/watch.rs). And then only if
//! the job left it as it was made (empty, ours, 0700: `left_as_given`). Any other is
//! removed. Making a directory costs (ext4 scans its
//! recently deleted inodes on each allocation: 0.10 to 0.45 ms for mkdir + rmdir on
//! this machine, as much as Landlock and seccomp together or more), so it happens off the spawn
//! path, on one helper thread: spares are made ahead, and finished jobs' directories
//! are kept or removed there. The first job of a process, or one that comes before a
//! spare is ready, makes its own.
//!
//! Nothing is left behind: at the process's exit the whole base goes (`remove_all_now`,
//! from the exit hook); the base of a process killed outright is removed by the next
//! process that makes one in the same parent (`private_base::sweep`: its own user's
//! `native-shell-<pid>-<n>` whose process is gone).

#[cfg(unix)]
pub use imp::*;

#[cfg(unix)]
mod imp {
    use std::io;
    use std::os::fd::OwnedFd;
    use std::path::{Path, PathBuf};
    use std::sync::mpsc::{channel, Receiver, Sender};
    use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

    use rustix::fs::{fstat, openat, statat, AtFlags, Dir, Mode, OFlags};

    use crate::sandbox::anchor::stat_id;
    use crate::sandbox::private_base::{fresh_name, make_base, make_in, Base};
    use crate::sandbox::{Anchor, FileId};

    /// How many empty directories are made ahead: enough for jobs started one after
    /// another to find theirs made, also while the helper thread waits for a core (it
    /// runs under `SCHED_BATCH`: on a busy machine, until the next scheduler tick).
    const SPARES_AHEAD: usize = 4;
    /// How many empty directories are kept at most (made ahead, or left by jobs).
    const MAX_SPARES: usize = 8;

    #[derive(Debug)]
    pub struct JobTmpDir {
        /// Its name in the private base (`job-<pid>-<n>`).
        name: String,
        /// Its path, and its identity (device and inode) since it was made.
        path: PathBuf,
        id: FileId,
        /// From when it was made until it is handed back (`release`, which takes it:
        /// `None` means handed back); a finished job kept in memory keeps no descriptor.
        held: Mutex<Option<Held>>,
    }

    /// A TMPDIR's name and identity, and copies of its descriptors (`carried_parts`).
    pub(in crate::sandbox) struct TmpDirParts {
        pub name: String,
        pub id: FileId,
        pub dir: OwnedFd,
        pub watch: Option<OwnedFd>,
    }

    /// What a directory not yet handed back holds.
    #[derive(Debug)]
    struct Held {
        /// What the job's rule is built from (shared with the helper thread while it
        /// builds that rule ahead: `next_spare`).
        dir: Arc<Anchor>,
        /// What tells that no process of the job is left anywhere, from the launch
        /// (`JobTmpDir::watch`).
        watch: Option<OwnedFd>,
    }

    /// What the helper thread is asked to do.
    enum Chore {
        MakeSpares,
        /// A finished job's directory: kept or removed.
        Settle(Finished),
        /// Work for the next job that needs the spares made first (`on_helper`).
        Run(Box<dyn FnOnce() + Send>),
    }

    /// A directory handed back (`JobTmpDir::release`).
    struct Finished {
        name: String,
        /// No process of its job can be left (its cgroup said so).
        reusable: bool,
        /// Its descriptor and what else may say so (`JobTmpDir::watch`); the
        /// descriptor is closed on the helper thread, off the caller's way.
        held: Held,
    }

    struct Pool {
        base: Result<Base, String>,
        /// Empty directories ready for jobs, oldest first.
        spares: Mutex<Vec<JobTmpDir>>,
        chores: Mutex<Option<Sender<Chore>>>,
    }

    static POOL: OnceLock<Pool> = OnceLock::new();

    fn pool() -> &'static Pool {
        POOL.get_or_init(|| pool_with(make_base()))
    }

    fn pool_with(base: Result<Base, String>) -> Pool {
        let (tx, rx) = channel::<Chore>();
        let started = std::thread::Builder::new()
            .name("native-shell-tmpdirs".into())
            .spawn(move || helper(rx))
            .is_ok();
        Pool {
            base,
            spares: Mutex::new(Vec::new()),
            chores: Mutex::new(if started { Some(tx) } else { None }),
        }
    }

    /// The private base, if this process made one (a restart in place carries it:
    /// src/sandbox/tmpdir_carry.rs).
    pub(in crate::sandbox) fn made_base() -> Option<&'static Base> {
        POOL.get().and_then(|pool| pool.base.as_ref().ok())
    }

    /// The new image of a restart in place takes the previous image's base as its own:
    /// the carried jobs' TMPDIRs are in it, and it goes at the process's exit as if
    /// this image had made it. `Err` if this image has a base already.
    pub(in crate::sandbox) fn adopt_base(base: Base) -> Result<(), String> {
        POOL.set(pool_with(Ok(base)))
            .map_err(|_| "this image made a TMPDIR base before the carried one".to_string())
    }

    /// `name` in the base is the directory `id` (a carried TMPDIR, checked).
    pub(in crate::sandbox) fn in_base(name: &str, id: FileId) -> bool {
        base().is_ok_and(|base| is(base, name, id))
    }

    /// The helper thread's loop. Everything here is work ahead of the jobs, or after
    /// them: on two cores its CPU (about 0.1 ms a job: the next ruleset, a directory
    /// made or kept) competed with the spawn, the JS thread and the new job, and that
    /// showed in every sandboxed spawn's time (docs/sandbox.md, "What it costs"). So
    /// it runs under `SCHED_BATCH` (`crate::platform::batch_current_thread`): handed
    /// work, it waits for a free core rather than taking one from the job or the JS
    /// thread, yet keeps its fair share on a busy machine (a lower weight, nice +10,
    /// made it fall behind there: measured worse). Falling behind costs time, never
    /// safety: a spawn that finds no spare or no ruleset made for it makes its own.
    /// This thread never starts a process (which would inherit its policy).
    fn helper(rx: Receiver<Chore>) {
        crate::platform::batch_current_thread();
        for chore in rx {
            match chore {
                Chore::MakeSpares => make_spares(),
                Chore::Settle(done) => {
                    let Held { dir, watch } = done.held;
                    let reusable = done.reusable || gone(watch.as_ref());
                    drop(watch);
                    settle(done.name, dir, reusable);
                }
                // The spares the last `take`s left short first (a spawn that finds none
                // makes one, the dearest miss), then the work.
                Chore::Run(work) => {
                    make_spares();
                    work();
                }
            }
        }
    }

    fn base() -> io::Result<&'static Base> {
        pool().base.as_ref().map_err(|why| io::Error::other(why.clone()))
    }

    fn spares() -> MutexGuard<'static, Vec<JobTmpDir>> {
        pool().spares.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands `chore` to the helper thread; false if there is none (then do it here).
    fn delegate(chore: Chore) -> Result<(), Chore> {
        let chores = pool().chores.lock().unwrap_or_else(|e| e.into_inner());
        match chores.as_ref() {
            Some(tx) => tx.send(chore).map_err(|e| e.0),
            None => Err(chore),
        }
    }

    /// On the helper thread: directories made ahead, up to `SPARES_AHEAD`.
    fn make_spares() {
        while spares().len() < SPARES_AHEAD {
            match JobTmpDir::make() {
                Ok(dir) => spares().push(dir),
                Err(_) => return,
            }
        }
    }

    /// On the helper thread: a finished job's directory, held since it was made. Kept
    /// as a spare, under the same name, when `reusable` and the job left it as it was
    /// given (empty, ours, 0700: `left_as_given`); else removed with its contents, if
    /// its name still is that directory (it always is: no job can write the base).
    ///
    /// Not renamed, and not found again by name: the descriptor held since the
    /// directory was made is what its next rule is built from, and the name is checked
    /// to still be that directory when it is handed out (`take`). A new name would
    /// stop nothing: no sandboxed job can write the base, and no process of the job
    /// that knew the name is left (`reusable`); it cost a rename (an ext4 journal
    /// entry) for every job.
    fn settle(name: String, dir: Arc<Anchor>, reusable: bool) {
        if reusable && spares().len() < MAX_SPARES && left_as_given(&dir) {
            spares().push(JobTmpDir::holding(name, dir));
            return;
        }
        let Ok(base) = base() else { return };
        let id = dir.id();
        drop(dir);
        if is(base, &name, id) {
            // std's remove_dir_all does not follow symlinks the job left.
            let _ = std::fs::remove_dir_all(base.dir.path().join(&name));
        }
    }

    /// The job's launch left a watch (Linux, no cgroup: `crate::platform::sandboxed_job_gone`)
    /// and it says no process of the job is left: asked here, as late as can be, so a
    /// process that was still being reaped when the job ended has gone by now.
    fn gone(watch: Option<&OwnedFd>) -> bool {
        watch.is_some_and(crate::platform::sandboxed_job_gone)
    }

    /// `name` in the base is the directory `id`.
    fn is(base: &Base, name: &str, id: FileId) -> bool {
        statat(base.dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| stat_id(&st) == id)
    }

    /// The directory is as `make_in` made it: ours, mode 0700 (its job owned it and may
    /// have changed that), and empty. Read through the descriptor held since it was
    /// made, never by name.
    fn left_as_given(dir: &Anchor) -> bool {
        // SAFETY: no arguments, no failure.
        let me = unsafe { libc::geteuid() };
        let as_made = fstat(dir.fd()).is_ok_and(|st| st.st_mode & 0o7777 == 0o700 && st.st_uid == me);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        as_made
            && openat(dir.fd(), ".", flags, Mode::empty())
                .and_then(Dir::new)
                .is_ok_and(|mut entries| {
                    entries.all(|e| e.is_ok_and(|e| matches!(e.file_name().to_bytes(), b"." | b"..")))
                })
    }

    /// Runs `work` on the helper thread after the chores queued before it, and after
    /// making the spares up to `SPARES_AHEAD` (the spare the next `take` hands out is
    /// there by then); dropped if there is no helper.
    pub fn on_helper(work: impl FnOnce() + Send + 'static) {
        let _ = delegate(Chore::Run(Box::new(work)));
    }

    /// The spare the next `take` hands out, if one is ready: its descriptor (and so its
    /// identity), to prepare that job's rules ahead.
    pub fn next_spare() -> Option<Arc<Anchor>> {
        // Shared, not duplicated: no system call while the spares are locked (a spawn
        // waits for this lock, and this thread runs at a lower weight).
        spares().first().and_then(|spare| spare.anchor())
    }

    /// The directories the private base is reached through (made first if it is not
    /// yet), the base's own identity last: a sandbox that makes any of them writable,
    /// or a directory inside the base, would let its jobs into other jobs' TMPDIRs.
    pub fn base_reached_through() -> io::Result<&'static [FileId]> {
        base().map(|b| b.reached.as_slice())
    }

    /// The private base, held open (made first if it is not yet): every job's own
    /// TMPDIR lies in it, so what hides paths from a sandbox's jobs grants it
    /// (src/platform/linux/sandbox/hidden.rs); the job's own rules narrow it to its own.
    pub fn base_dir() -> io::Result<&'static Anchor> {
        base().map(|b| &b.dir)
    }

    /// The private base's identity (made first if it is not yet).
    pub fn base_id() -> io::Result<FileId> {
        base().map(|b| b.dir.id())
    }

    impl JobTmpDir {
        /// Removes the private base with every job's directory and the spares: for the
        /// process's exit, after its jobs were killed (`Drop` runs no more then, and
        /// chores queued for the helper may never run).
        pub fn remove_all_now() {
            let Some(Ok(base)) = POOL.get().map(|p| p.base.as_ref()) else {
                return;
            };
            // Twice: the helper thread may have been making a spare during the first.
            for _ in 0..2 {
                if std::fs::remove_dir_all(base.dir.path()).is_ok() {
                    return;
                }
            }
        }

        /// A private, empty directory for one job: a spare if there is one (still the
        /// directory it was made as), else made now. The helper then makes more ahead.
        pub fn take() -> io::Result<Self> {
            let (ready, left) = {
                let mut spares = spares();
                let ready = (!spares.is_empty()).then(|| spares.remove(0));
                (ready, spares.len())
            };
            // Spares are made ahead by the next hand-over to the helper thread
            // (`on_helper`: a sandboxed spawn's own, after its launch), and asked for
            // here only when none is left: the spawn's path wakes the helper thread
            // once, not twice. No helper thread: the next job makes its own.
            if left == 0 {
                let _ = delegate(Chore::MakeSpares);
            }
            match ready {
                Some(spare) if spare.intact() => Ok(spare),
                // Dropped: removed, if it is still there by its name.
                Some(_changed) => Self::make(),
                None => Self::make(),
            }
        }

        /// Makes `<base>/job-<pid>-<n>`, a name no one has (an existing entry of that
        /// name is skipped, never reused).
        fn make() -> io::Result<Self> {
            let base = base()?;
            loop {
                let name = fresh_name("job-", std::process::id());
                match make_in(&base.dir, &name) {
                    Ok(dir) => return Ok(Self::holding(name, Arc::new(dir))),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e),
                }
            }
        }

        /// `name` in the base, held as `dir`.
        fn holding(name: String, dir: Arc<Anchor>) -> Self {
            Self {
                name,
                path: dir.path().to_path_buf(),
                id: dir.id(),
                held: Mutex::new(Some(Held { dir, watch: None })),
            }
        }

        /// Its name, and copies of what it holds while not handed back: its directory
        /// and the watch (a restart in place carries them: src/sandbox/carry.rs).
        pub(in crate::sandbox) fn carried_parts(&self) -> Option<io::Result<TmpDirParts>> {
            let held = self.held();
            let held = held.as_ref()?;
            let copy = || -> io::Result<TmpDirParts> {
                Ok(TmpDirParts {
                    name: self.name.clone(),
                    id: self.id,
                    dir: held.dir.fd().try_clone_to_owned()?,
                    watch: held.watch.as_ref().map(|w| w.try_clone()).transpose()?,
                })
            };
            Some(copy())
        }

        /// A carried TMPDIR, held again (`in_base` checked first).
        pub(in crate::sandbox) fn adopted(name: String, dir: Anchor, watch: Option<OwnedFd>) -> Self {
            let made = Self::holding(name, Arc::new(dir));
            if let Some(watch) = watch {
                made.watch(watch);
            }
            made
        }

        /// Its name in the base still names the directory that was made (device and
        /// inode), not something put there since.
        fn intact(&self) -> bool {
            base().is_ok_and(|base| is(base, &self.name, self.id))
        }

        /// The path the job is given as `TMPDIR`.
        pub fn path(&self) -> &Path {
            &self.path
        }

        /// The directory, held open since it was made: the job's rule is built from
        /// it. `None` once handed back (`release`).
        pub fn anchor(&self) -> Option<Arc<Anchor>> {
            self.held().as_ref().map(|held| held.dir.clone())
        }

        fn held(&self) -> MutexGuard<'_, Option<Held>> {
            self.held.lock().unwrap_or_else(|e| e.into_inner())
        }

        /// Hands the directory back, once: when nothing of the job runs any more, or
        /// at the latest when it is dropped. `reusable`: no process of the job can be
        /// left anywhere (its cgroup held everything it started and is empty), so the
        /// directory may go to another job if the job left it empty; else it is removed.
        pub fn release(&self, reusable: bool) {
            let Some(held) = self.held().take() else {
                return;
            };
            let done = Finished {
                name: self.name.clone(),
                reusable,
                held,
            };
            if let Err(Chore::Settle(done)) = delegate(Chore::Settle(done)) {
                settle(done.name, done.held.dir, false);
            }
        }

        /// Given by the launch (Linux, a job no cgroup holds): a descriptor that tells
        /// when no process of the job is left anywhere (`crate::platform::sandboxed_job_gone`).
        /// The directory is then reusable however `release` is called: no process
        /// that kept a rule on it can be left.
        pub fn watch(&self, watch: OwnedFd) {
            if let Some(held) = self.held().as_mut() {
                held.watch = Some(watch);
            }
        }
    }

    impl Drop for JobTmpDir {
        fn drop(&mut self) {
            // Something of the job may still run: never kept for another job.
            self.release(false);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn eventually(check: impl Fn() -> bool) -> bool {
            for _ in 0..3000 {
                if check() {
                    return true;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            check()
        }

        fn mode(path: &Path) -> u32 {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
        }

        fn id(path: &Path) -> FileId {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::metadata(path).expect("meta");
            (m.dev(), m.ino())
        }

        #[test]
        fn made_private_outside_tmp_and_removed_with_its_contents() {
            let dir = JobTmpDir::take().expect("take");
            let path = dir.path().to_path_buf();
            std::fs::write(path.join("f"), "x").expect("write");
            assert_eq!(mode(&path), 0o700);
            assert_eq!(mode(path.parent().expect("base")), 0o700);
            // Not reached through /tmp: no job's /tmp rule reaches it.
            let reached = base_reached_through().expect("base");
            assert!(
                !reached.contains(&id(Path::new(crate::sandbox::SHARED_TMP))),
                "{}",
                path.display()
            );
            assert!(reached.contains(&id(path.parent().expect("base"))));
            assert_eq!(
                dir.anchor().expect("held").id(),
                id(&path),
                "the rule's descriptor is the directory"
            );
            dir.release(false);
            // Handed back, it holds no descriptor.
            assert!(dir.anchor().is_none());
            assert!(eventually(|| !path.exists()));
        }

        #[test]
        fn kept_for_another_job_only_when_reusable_and_left_as_given() {
            let settled = |reusable: bool, leave: bool, chmod: bool| {
                let dir = JobTmpDir::take().expect("take");
                // Settled here, not by the helper, so the outcome is seen at once.
                let held = dir.held().take().expect("held");
                if leave {
                    std::fs::write(dir.path().join("left"), "x").expect("write");
                }
                if chmod {
                    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755))
                        .expect("chmod");
                }
                settle(dir.name.clone(), held.dir, reusable);
                // Found by name, never reused: a removed directory's inode number may be
                // given at once to a spare the helper thread makes meanwhile.
                let kept = spares()
                    .iter()
                    .find(|s| s.name == dir.name && s.id == dir.id)
                    .map(|s| s.path().to_path_buf());
                (dir.path().to_path_buf(), kept)
            };
            // Kept, under its name, still 0700.
            let (old, kept) = settled(true, false, false);
            assert_eq!(kept.as_deref(), Some(old.as_path()), "kept as a spare");
            assert_eq!(mode(&old), 0o700);
            // Something of the job may live on: removed.
            let (old, kept) = settled(false, false, false);
            assert!(kept.is_none() && !old.exists());
            // The job left something in it, or changed its mode: removed, contents and all.
            let (old, kept) = settled(true, true, false);
            assert!(kept.is_none() && !old.exists());
            let (changed, kept) = settled(true, false, true);
            assert!(kept.is_none() && !changed.exists());
            assert!(std::fs::read_dir(old.parent().expect("base")).expect("list").all(|e| !e
                .expect("entry")
                .path()
                .join("left")
                .exists()));
        }

        #[test]
        fn each_job_gets_a_new_directory_and_a_spare_swapped_since_is_not_handed_out() {
            let first = JobTmpDir::take().expect("first");
            let second = JobTmpDir::take().expect("second");
            assert_ne!(first.path(), second.path());
            assert!(second.path().is_dir());
            // A spare whose name was given to another directory since (what a job could
            // do if it could write the base): not handed out.
            assert!(eventually(|| !spares().is_empty()));
            let swapped = {
                let spares = spares();
                let spare = &spares[0];
                let path = spare.path().to_path_buf();
                std::fs::remove_dir(&path).expect("rmdir");
                std::fs::create_dir(&path).expect("mkdir");
                path
            };
            let mut taken = Vec::new();
            for _ in 0..SPARES_AHEAD + 1 {
                let dir = JobTmpDir::take().expect("take");
                assert_ne!(dir.path(), swapped, "the swapped spare was handed out");
                taken.push(dir);
            }
            let _ = std::fs::remove_dir(&swapped);
        }
    }
}

/// No sandbox, so no TMPDIR of a job's own, on a platform without descriptors to hold.
#[cfg(not(unix))]
#[derive(Debug)]
pub struct JobTmpDir(std::convert::Infallible);

#[cfg(not(unix))]
impl JobTmpDir {
    pub fn remove_all_now() {}

    pub fn take() -> std::io::Result<Self> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    pub fn path(&self) -> &std::path::Path {
        match self.0 {}
    }

    pub fn release(&self, _reusable: bool) {}
}
