use super::target::{TAG, owner};
use super::*;
use crate::Result;
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;

fn both() -> [WriteOptions; 2] {
    [
        WriteOptions::new(),
        WriteOptions::new().named_temporary(true),
    ]
}

#[test]
fn failed_write_leaves_old_file_and_no_temporary() {
    for opts in both() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        fs::write(&path, b"old contents").unwrap();
        let r: std::result::Result<(), Error> = write_atomic_with(&path, &opts, |w| {
            w.write_all(&[7u8; 3 << 20])
                .map_err(|e| Error::io("w", e))?;
            Err(Error::io(
                "halfway",
                std::io::Error::other("writer failed halfway"),
            ))
        });
        assert!(r.unwrap_err().to_string().contains("halfway"));
        assert_eq!(fs::read(&path).unwrap(), b"old contents");
        assert_eq!(count_entries(dir.path()), 1, "temporary left behind");
        write_atomic_with::<Error>(&path, &opts, |w| {
            w.write_all(b"new").map_err(|e| Error::io("w", e))
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(count_entries(dir.path()), 1);
    }
}

#[test]
fn a_spooled_write_gives_the_files_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.bin");
    write_atomic(&path, write_seeking).unwrap();
    let mut out = Vec::new();
    write_spooled(&mut out, write_seeking).unwrap();
    assert_eq!(out, fs::read(&path).unwrap());
    assert_eq!(out, WRITTEN);
}

#[test]
fn path_writer_failing_leaves_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.bin");
    fs::write(&path, b"old contents").unwrap();
    let r: std::result::Result<(), Error> = write_atomic_path(&path, |tmp| {
        fs::write(tmp, [7u8; 1000]).map_err(|e| Error::io("w", e))?;
        Err(Error::io(
            "halfway",
            std::io::Error::other("writer failed halfway"),
        ))
    });
    assert!(r.is_err());
    assert_eq!(fs::read(&path).unwrap(), b"old contents");
    assert_eq!(count_entries(dir.path()), 1, "temporary left behind");
    write_atomic_path::<Error>(&path, |tmp| {
        fs::write(tmp, b"new").map_err(|e| Error::io("w", e))
    })
    .unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"new");
    assert_eq!(count_entries(dir.path()), 1);
}

#[cfg(target_os = "linux")]
#[test]
fn unnamed_file_leaves_no_name_while_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.bin");
    if unnamed::create(dir.path()).is_none() {
        return; // this filesystem has no O_TMPFILE: the named path is tested
    }
    write_atomic_with::<Error>(&path, &WriteOptions::new(), |w| {
        w.write_all(&[1u8; 2 << 20])
            .map_err(|e| Error::io("w", e))?;
        // tmpfs, ext4, xfs and btrfs take O_TMPFILE: nothing is named yet
        assert_eq!(count_entries(dir.path()), 0);
        Ok(())
    })
    .unwrap();
    assert_eq!(fs::read(&path).unwrap().len(), 2 << 20);
    assert_eq!(count_entries(dir.path()), 1);
}

#[cfg(unix)]
#[test]
fn new_files_get_umask_permissions_and_sync_writes_the_same_bytes() {
    use std::os::unix::fs::PermissionsExt;
    for opts in both() {
        for sync in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("m.bin");
            write_atomic_with::<Error>(&path, &opts.sync(sync), |w| {
                w.write_all(b"abc").map_err(|e| Error::io("w", e))
            })
            .unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"abc");
            // compare with a file made the ordinary way
            let plain = dir.path().join("plain");
            fs::write(&plain, b"x").unwrap();
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), mode(&plain), "{opts:?} sync={sync}");
        }
    }
}

#[test]
fn stale_temporaries_of_dead_writers_go_live_ones_stay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    let me = owner::me();
    if me.start == 0 {
        return; // no /proc: nothing can be told, nothing is removed
    }
    // pid 4194304 is above Linux's largest pid: never a live process
    let dead = dir
        .path()
        .join(format!(".out.bin.{TAG}4194304-1-{}-0.tmp", me.ns));
    let dead_legacy = dir.path().join(".out.bin.4194304.1a2b.tmp");
    // pid 1 is alive, but it started at another time: a reused pid
    let reused = dir
        .path()
        .join(format!(".out.bin.{TAG}1-999999999999-{}-0.tmp", me.ns));
    // this process, a live writer
    let live = dir.path().join(format!(
        ".out.bin.{TAG}{}-{}-{}-0.tmp",
        me.pid, me.start, me.ns
    ));
    // another namespace: cannot tell, left alone
    let foreign = dir
        .path()
        .join(format!(".out.bin.{TAG}4194304-1-{}-0.tmp", me.ns + 1));
    // another output's temporary
    let other = dir
        .path()
        .join(format!(".other.bin.{TAG}4194304-1-{}-0.tmp", me.ns));
    for p in [&dead, &dead_legacy, &reused, &live, &foreign, &other] {
        fs::write(p, b"x").unwrap();
    }
    write_atomic::<Error>(&path, |w| {
        w.write_all(b"new").map_err(|e| Error::io("w", e))
    })
    .unwrap();
    assert!(!dead.exists());
    assert!(!dead_legacy.exists());
    assert!(!reused.exists());
    assert!(live.exists());
    assert!(foreign.exists());
    assert!(other.exists());
}

/// Whether any process still holds `ino` on device `dev` open.
#[cfg(target_os = "linux")]
fn held_open(dev: u64, ino: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(procs) = fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        fs::read_dir(p.path().join("fd")).is_ok_and(|fds| {
            fds.flatten()
                .any(|fd| fs::metadata(fd.path()).is_ok_and(|m| m.dev() == dev && m.ino() == ino))
        })
    })
}

#[test]
#[cfg(target_os = "linux")]
fn replacing_a_large_file_leaves_only_the_output_and_frees_the_previous() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    for opts in both() {
        let big = vec![7u8; 40 << 20];
        fs::write(&path, &big).unwrap();
        let old = fs::metadata(&path).unwrap();
        write_atomic_with::<Error>(&path, &opts, |w| {
            w.write_all(b"new").map_err(|e| Error::io("w", e))
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(count_entries(dir.path()), 1, "{opts:?}");
        // the previous contents are released: whoever freed them (this
        // process or the child it handed them to) lets go within seconds
        let mut waited = 0;
        while held_open(old.dev(), old.ino()) {
            assert!(waited < 600, "the previous contents are still open");
            std::thread::sleep(std::time::Duration::from_millis(50));
            waited += 1;
        }
    }
}

/// The bytes every test below writes, through a writer that seeks back
/// (as the zip and HDF5 writers do).
fn write_seeking(w: &mut Sink) -> Result<()> {
    w.write_all(b"abcdef").map_err(|e| Error::io("w", e))?;
    w.seek(SeekFrom::Start(1)).map_err(|e| Error::io("w", e))?;
    w.write_all(b"X").map_err(|e| Error::io("w", e))?;
    w.seek(SeekFrom::End(0)).map_err(|e| Error::io("w", e))?;
    Ok(())
}

const WRITTEN: &[u8] = b"aXcdef";

#[cfg(unix)]
#[test]
fn a_symlink_has_its_target_replaced_and_stays_a_link() {
    use std::os::unix::fs::symlink;
    for opts in both() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        let real = sub.join("real.bin");
        fs::write(&real, b"old").unwrap();
        // a chain: link -> sub/middle -> real.bin (relative to its folder)
        symlink("real.bin", sub.join("middle")).unwrap();
        let link = dir.path().join("link");
        symlink("sub/middle", &link).unwrap();
        write_atomic_with(&link, &opts, write_seeking).unwrap();
        assert_eq!(fs::read(&real).unwrap(), WRITTEN, "{opts:?}");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            fs::symlink_metadata(sub.join("middle"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(count_entries(dir.path()), 2, "{opts:?}");
        assert_eq!(count_entries(&sub), 2, "temporary left beside the target");
        // the path writer too
        write_atomic_path_with::<Error>(&link, &opts, |tmp| {
            fs::write(tmp, b"by path").map_err(|e| Error::io("w", e))
        })
        .unwrap();
        assert_eq!(fs::read(&real).unwrap(), b"by path");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(count_entries(&sub), 2);
    }
}

#[cfg(unix)]
#[test]
fn a_dangling_symlink_gets_the_file_it_names_and_a_loop_is_refused() {
    use std::os::unix::fs::symlink;
    for opts in both() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        symlink("made.bin", &link).unwrap();
        write_atomic_with(&link, &opts, write_seeking).unwrap();
        assert_eq!(fs::read(dir.path().join("made.bin")).unwrap(), WRITTEN);
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(count_entries(dir.path()), 2);
        // a loop: refused, nothing created
        let a = dir.path().join("a");
        symlink("b", &a).unwrap();
        symlink("a", dir.path().join("b")).unwrap();
        let e = write_atomic_with(&a, &opts, write_seeking).unwrap_err();
        assert!(e.to_string().contains("a"), "{e}");
        assert_eq!(count_entries(dir.path()), 4);
    }
}

/// Makes a FIFO at `path`.
#[cfg(target_os = "linux")]
fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

/// Reads `path` (a FIFO) to its end in a thread.
#[cfg(target_os = "linux")]
fn read_in_thread(path: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    let path = path.to_path_buf();
    std::thread::spawn(move || fs::read(path).unwrap())
}

#[cfg(target_os = "linux")]
#[test]
fn a_fifo_is_written_through_not_replaced() {
    use std::os::unix::fs::{FileTypeExt, symlink};
    for opts in both() {
        for sync in [false, true] {
            let opts = opts.sync(sync);
            let dir = tempfile::tempdir().unwrap();
            let fifo = dir.path().join("fifo");
            mkfifo(&fifo);
            let reader = read_in_thread(&fifo);
            write_atomic_with(&fifo, &opts, write_seeking).unwrap();
            assert_eq!(reader.join().unwrap(), WRITTEN, "{opts:?}");
            assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
            // a symlink to it, as /dev/stdout is to a pipe
            let stdout = dir.path().join("stdout");
            symlink(&fifo, &stdout).unwrap();
            let reader = read_in_thread(&fifo);
            write_atomic_with(&stdout, &opts, write_seeking).unwrap();
            assert_eq!(reader.join().unwrap(), WRITTEN);
            assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
            assert!(
                fs::symlink_metadata(&stdout)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
            // the path writer, through a named temporary elsewhere, removed
            let reader = read_in_thread(&fifo);
            let mut spooled = PathBuf::new();
            write_atomic_path_with::<Error>(&stdout, &opts, |tmp| {
                spooled = tmp.to_path_buf();
                fs::write(tmp, b"by path").map_err(|e| Error::io("w", e))
            })
            .unwrap();
            assert_eq!(reader.join().unwrap(), b"by path");
            assert!(!spooled.exists(), "{} left behind", spooled.display());
            assert_eq!(count_entries(dir.path()), 2, "only the FIFO and the link");
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_pipe_named_by_proc_self_fd_is_written_through() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let (mut reader, writer) = std::io::pipe().unwrap();
    // /proc/self/fd/N is a link to `pipe:[...]`, a name that resolves to nothing
    let path = PathBuf::from(format!("/proc/self/fd/{}", writer.as_raw_fd()));
    let got = std::thread::spawn(move || {
        let mut v = Vec::new();
        reader.read_to_end(&mut v).unwrap();
        v
    });
    write_atomic(&path, write_seeking).unwrap();
    drop(writer);
    assert_eq!(got.join().unwrap(), WRITTEN);
}

#[cfg(unix)]
#[test]
fn a_character_device_is_written_through() {
    use std::os::unix::fs::FileTypeExt;
    // writing /dev/null is harmless, and it must stay a device
    write_atomic("/dev/null", write_seeking).unwrap();
    assert!(
        fs::symlink_metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

/// This process' effective user id: the owner of a file it creates.
#[cfg(unix)]
fn euid(dir: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    let p = dir.join(".euid");
    fs::write(&p, b"").unwrap();
    let uid = fs::metadata(&p).unwrap().uid();
    fs::remove_file(&p).unwrap();
    uid
}

#[cfg(unix)]
#[test]
fn a_replaced_file_keeps_its_permissions_and_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
    for opts in both() {
        for sync in [false, true] {
            let opts = opts.sync(sync);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("secret.bin");
            fs::write(&path, b"old").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
            let root = euid(dir.path()) == 0;
            if root {
                // another owner and group, as root may give
                chown(&path, Some(1234), Some(5678)).unwrap();
            }
            let before = fs::metadata(&path).unwrap();
            write_atomic_with(&path, &opts, write_seeking).unwrap();
            let after = fs::metadata(&path).unwrap();
            assert_eq!(fs::read(&path).unwrap(), WRITTEN);
            assert_ne!(after.ino(), before.ino(), "replaced, not rewritten");
            assert_eq!(after.mode() & 0o7777, 0o600, "{opts:?}");
            assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
            // through a symlink, and by path
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
            write_atomic_path_with::<Error>(&link, &opts, |tmp| {
                fs::write(tmp, b"by path").map_err(|e| Error::io("w", e))
            })
            .unwrap();
            let after = fs::metadata(&path).unwrap();
            assert_eq!(after.mode() & 0o7777, 0o640);
            assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
            assert_eq!(count_entries(dir.path()), 2);
        }
    }
}

#[cfg(unix)]
#[test]
fn a_socket_and_a_folder_are_refused_and_nothing_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let e = write_atomic(&sock, write_seeking).unwrap_err();
    assert!(e.to_string().contains("socket"), "{e}");
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let e = write_atomic(&sub, write_seeking).unwrap_err();
    assert!(
        e.to_string().contains("cannot write the output here"),
        "{e}"
    );
    // a parent that is a regular file: no folder to write in
    let file = dir.path().join("file");
    fs::write(&file, b"x").unwrap();
    let e = write_atomic(file.join("out.bin"), write_seeking).unwrap_err();
    assert!(e.to_string().contains("file"), "{e}");
    assert_eq!(fs::read(&file).unwrap(), b"x");
    assert_eq!(count_entries(dir.path()), 3);
    assert_eq!(count_entries(&sub), 0);
}

#[cfg(unix)]
#[test]
fn a_folder_without_write_permission_is_an_error_and_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    if euid(dir.path()) == 0 {
        // root writes whatever the permission bits say: nothing to test
        return;
    }
    let ro = dir.path().join("ro");
    fs::create_dir(&ro).unwrap();
    fs::write(ro.join("old.bin"), b"old").unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    for opts in both() {
        let e = write_atomic_with(ro.join("old.bin"), &opts, write_seeking).unwrap_err();
        assert!(
            e.to_string().contains("cannot create a file in the folder"),
            "{e}"
        );
        assert_eq!(fs::read(ro.join("old.bin")).unwrap(), b"old");
        assert_eq!(count_entries(&ro), 1);
    }
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_spooled_write_that_fails_writes_nothing() {
    let mut out = Vec::new();
    let r = write_spooled(&mut out, |w| write_seeking(w).map(|()| 7));
    assert_eq!(r.unwrap(), 7);
    assert_eq!(out, WRITTEN);
    let mut out = Vec::new();
    let r = write_spooled(&mut out, |w| -> Result<()> {
        w.write_all(b"half").map_err(|e| Error::io("w", e))?;
        Err(Error::io("halfway", std::io::Error::other("failed")))
    });
    assert!(r.unwrap_err().to_string().contains("halfway"));
    assert!(out.is_empty());
}
