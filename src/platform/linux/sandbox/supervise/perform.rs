//! The calls a supervised job asked for, made by the supervisor: the address and the
//! data are copied out of the job once, judged, and the call is made with those copies
//! on a duplicate of the job's own socket (`pidfd_getfd`: the same open socket, so the
//! job finds it connected, or its datagram sent, as if it had made the call). Its
//! result or errno is the job's.
//!
//! Never `SECCOMP_USER_NOTIF_FLAG_CONTINUE`: letting the job's call go on would have the
//! kernel read the address again from the job's memory, which another of its threads
//! may have changed since it was judged.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use super::address::{target, verdict, Target, Verdict, MAX_ADDRESS};
use super::job::{Caller, Outcome, Refused};
use super::{unix_path, Policy};

/// At most this much data is copied for one send: a stream send of more sends this
/// much (a short send, which callers of stream sockets handle); a datagram of more is
/// refused (`EMSGSIZE`: larger than a unix datagram socket's default buffer anyway).
const MAX_PAYLOAD: usize = 1 << 20;
/// Ancillary data: more than the kernel's default `optmem_max` takes anyway.
const MAX_CONTROL: usize = 64 << 10;
/// `UIO_MAXIOV`.
const MAX_IOV: usize = 1024;
/// `struct msghdr`, `struct iovec`, `struct cmsghdr` on the 64-bit targets the filter
/// is built for (`super::super::filter::AUDIT_ARCH`).
const MSGHDR_LEN: usize = 56;
const IOVEC_LEN: usize = 16;
const CMSG_HEADER: usize = 16;

/// The call `data` describes, made for `caller`.
pub fn request(caller: &Caller<'_>, data: &libc::seccomp_data, policy: &Policy) -> Outcome<i64> {
    let args = data.args;
    match i64::from(data.nr) {
        libc::SYS_connect => connect(caller, args, policy),
        libc::SYS_sendto => sendto(caller, args, policy),
        libc::SYS_sendmsg => sendmsg(caller, args, policy),
        libc::SYS_sendmmsg => sendmmsg(caller, args, policy),
        // Nothing else is handed over by the filter (`refusals::supervised_calls`).
        _ => Err(Refused::Errno(libc::ENOSYS)),
    }
}

/// A destination as the call will name it, and the socket file it reaches (held until
/// the call is made).
struct Destination {
    address: Vec<u8>,
    _file: Option<OwnedFd>,
}

fn destination(caller: &Caller<'_>, bytes: Vec<u8>, kind: i32, policy: &Policy) -> Outcome<Destination> {
    let found = target(&bytes).map_err(Refused::Errno)?;
    match verdict(&found, kind, &policy.network) {
        Verdict::Refuse(errno) => Err(Refused::Errno(errno)),
        Verdict::Make => Ok(Destination {
            address: bytes,
            _file: None,
        }),
        Verdict::Judge => {
            let Target::UnixPath(path) = found else {
                return Err(Refused::Errno(libc::EINVAL));
            };
            let file = unix_path::open(caller, path)?;
            unix_path::judge(file.as_fd(), policy)?;
            Ok(Destination {
                address: unix_path::through_descriptor(file.as_fd()),
                _file: Some(file),
            })
        }
    }
}

fn address_len(raw: u64) -> Outcome<usize> {
    let len = raw as u32 as usize;
    if len > MAX_ADDRESS {
        return Err(Refused::Errno(libc::EINVAL));
    }
    Ok(len)
}

/// The socket's type (`SOCK_STREAM`, `SOCK_DGRAM`...); `ENOTSOCK` for another file.
fn socket_type(socket: BorrowedFd<'_>) -> Outcome<i32> {
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: an int and its length.
    let done = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut kind as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if done < 0 {
        return Err(Refused::Errno(errno()));
    }
    Ok(kind)
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// A system call's return as the job's: the value, or its errno.
fn returned(value: isize) -> Outcome<i64> {
    if value < 0 {
        Err(Refused::Errno(errno()))
    } else {
        Ok(value as i64)
    }
}

/// `connect(fd, address, length)`.
fn connect(caller: &Caller<'_>, args: [u64; 6], policy: &Policy) -> Outcome<i64> {
    let len = address_len(args[2])?;
    let bytes = caller.read(args[1], len)?;
    let socket = caller.descriptor(args[0])?;
    let kind = socket_type(socket.as_fd())?;
    let to = destination(caller, bytes, kind, policy)?;
    let done = caller.blocking(|| {
        // SAFETY: an address of its own length, on a descriptor held here.
        unsafe {
            libc::connect(
                socket.as_raw_fd(),
                to.address.as_ptr().cast(),
                to.address.len() as libc::socklen_t,
            ) as isize
        }
    });
    returned(done)
}

/// How much of `len` bytes of data is copied for a socket of type `kind`.
fn payload_len(len: usize, kind: i32) -> Outcome<usize> {
    if len <= MAX_PAYLOAD {
        Ok(len)
    } else if kind == libc::SOCK_STREAM {
        Ok(MAX_PAYLOAD)
    } else {
        Err(Refused::Errno(libc::EMSGSIZE))
    }
}

/// The supervisor never takes a `SIGPIPE` for the job (`MSG_NOSIGNAL`); the job gets
/// the one its own send would have raised.
fn sent(caller: &Caller<'_>, value: isize, flags: i32) -> Outcome<i64> {
    let result = returned(value);
    if result == Err(Refused::Errno(libc::EPIPE)) && flags & libc::MSG_NOSIGNAL == 0 {
        caller.broken_pipe();
    }
    result
}

/// `sendto(fd, data, length, flags, address, address length)` with an address (the
/// filter hands over no other).
fn sendto(caller: &Caller<'_>, args: [u64; 6], policy: &Policy) -> Outcome<i64> {
    let flags = args[3] as i32;
    let len = address_len(args[5])?;
    let bytes = caller.read(args[4], len)?;
    let socket = caller.descriptor(args[0])?;
    let kind = socket_type(socket.as_fd())?;
    // An address of length 0 is none: the kernel sends to the connected peer.
    let to = match len {
        0 => None,
        _ => Some(destination(caller, bytes, kind, policy)?),
    };
    let (address, address_len) = to.as_ref().map_or((std::ptr::null(), 0), |to| {
        (to.address.as_ptr(), to.address.len() as libc::socklen_t)
    });
    let data = caller.read(args[1], payload_len(args[2] as usize, kind)?)?;
    let done = caller.blocking(|| {
        // SAFETY: buffers of their own lengths (or no address), on a descriptor held here.
        unsafe {
            libc::sendto(
                socket.as_raw_fd(),
                data.as_ptr().cast(),
                data.len(),
                flags | libc::MSG_NOSIGNAL,
                address.cast(),
                address_len,
            )
        }
    });
    sent(caller, done, flags)
}

fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_ne_bytes(w)
}

/// One message of `sendmsg` or `sendmmsg`, copied: its destination, its data (gathered
/// into one buffer: the same bytes in the same order), its ancillary data with the
/// descriptors it passes (held until it is sent).
struct Message {
    to: Option<Destination>,
    data: Vec<u8>,
    control: Vec<u8>,
    _passed: Vec<OwnedFd>,
    one: libc::iovec,
}

impl Message {
    /// The `struct msghdr` at `header` (its bytes, copied) of a socket of type `kind`.
    fn copy(caller: &Caller<'_>, header: &[u8], kind: i32, policy: &Policy) -> Outcome<Box<Self>> {
        let (name, name_len) = (word(header, 0), word(header, 8) as u32 as u64);
        let (iov, iov_count) = (word(header, 16), word(header, 24));
        let (control, control_len) = (word(header, 32), word(header, 40));
        let to = if name != 0 && name_len != 0 {
            let len = address_len(name_len)?;
            Some(destination(caller, caller.read(name, len)?, kind, policy)?)
        } else {
            None
        };
        let data = gather(caller, iov, iov_count, kind)?;
        let (control, passed) = ancillary(caller, control, control_len)?;
        let mut message = Box::new(Self {
            to,
            data,
            control,
            _passed: passed,
            one: libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            },
        });
        message.one = libc::iovec {
            iov_base: message.data.as_mut_ptr().cast(),
            iov_len: message.data.len(),
        };
        Ok(message)
    }

    /// The `struct msghdr` for the kernel: pointers into this message, which is boxed
    /// (it does not move) and outlives the call.
    fn header(&mut self) -> libc::msghdr {
        // SAFETY: plain integers and pointers, all set below.
        let mut header: libc::msghdr = unsafe { std::mem::zeroed() };
        if let Some(to) = &self.to {
            header.msg_name = to.address.as_ptr() as *mut libc::c_void;
            header.msg_namelen = to.address.len() as libc::socklen_t;
        }
        header.msg_iov = &mut self.one;
        header.msg_iovlen = 1;
        if !self.control.is_empty() {
            header.msg_control = self.control.as_mut_ptr().cast();
            header.msg_controllen = self.control.len() as _;
        }
        header
    }
}

/// `sendmsg(fd, message, flags)`.
fn sendmsg(caller: &Caller<'_>, args: [u64; 6], policy: &Policy) -> Outcome<i64> {
    let flags = args[2] as i32;
    let header = caller.read(args[1], MSGHDR_LEN)?;
    let socket = caller.descriptor(args[0])?;
    let kind = socket_type(socket.as_fd())?;
    let mut message = Message::copy(caller, &header, kind, policy)?;
    let header = message.header();
    // SAFETY: every pointer in `header` is into `message`, held until it returns.
    let done = caller.blocking(|| unsafe { libc::sendmsg(socket.as_raw_fd(), &header, flags | libc::MSG_NOSIGNAL) });
    sent(caller, done, flags)
}

/// `struct mmsghdr`: a `msghdr` and the length sent, which the kernel writes back.
const MMSGHDR_LEN: usize = 64;

/// `sendmmsg(fd, messages, count, flags)` (glibc's resolver sends its two queries with
/// it, and has no fallback): each message copied as `sendmsg`'s; the lengths sent are
/// written back into the job's vector, as the kernel would. As the kernel, a message
/// refused after the first ends the batch there (the count sent so far is returned).
fn sendmmsg(caller: &Caller<'_>, args: [u64; 6], policy: &Policy) -> Outcome<i64> {
    let flags = args[3] as i32;
    let count = (args[2] as u32 as usize).min(MAX_IOV);
    let socket = caller.descriptor(args[0])?;
    let kind = socket_type(socket.as_fd())?;
    let vector = caller.read(args[1], count * MMSGHDR_LEN)?;
    let mut messages = Vec::with_capacity(count);
    for i in 0..count {
        let header = &vector[i * MMSGHDR_LEN..i * MMSGHDR_LEN + MSGHDR_LEN];
        match Message::copy(caller, header, kind, policy) {
            Ok(message) => messages.push(message),
            Err(refused) if messages.is_empty() => return Err(refused),
            Err(_) => break,
        }
    }
    let mut headers: Vec<libc::mmsghdr> = messages
        .iter_mut()
        .map(|m| libc::mmsghdr {
            msg_hdr: m.header(),
            msg_len: 0,
        })
        .collect();
    if headers.is_empty() {
        return Ok(0);
    }
    let done = caller.blocking(|| {
        // SAFETY: every pointer in `headers` is into `messages`, held until it returns.
        unsafe {
            libc::sendmmsg(
                socket.as_raw_fd(),
                headers.as_mut_ptr(),
                headers.len() as libc::c_uint,
                flags | libc::MSG_NOSIGNAL,
            ) as isize
        }
    });
    let result = sent(caller, done, flags)?;
    for (i, header) in headers.iter().take(result as usize).enumerate() {
        let at = args[1] + (i * MMSGHDR_LEN + MSGHDR_LEN) as u64;
        caller.write(at, &header.msg_len.to_ne_bytes())?;
    }
    Ok(result)
}

/// The data of `count` iovecs at `iov`, up to what `payload_len` allows.
fn gather(caller: &Caller<'_>, iov: u64, count: u64, kind: i32) -> Outcome<Vec<u8>> {
    let count = usize::try_from(count).map_err(|_| Refused::Errno(libc::EMSGSIZE))?;
    if count > MAX_IOV {
        return Err(Refused::Errno(libc::EMSGSIZE));
    }
    if count == 0 {
        return Ok(Vec::new());
    }
    let vectors = caller.read(iov, count * IOVEC_LEN)?;
    let parts: Vec<(u64, usize)> = (0..count)
        .map(|i| {
            (
                word(&vectors, i * IOVEC_LEN),
                word(&vectors, i * IOVEC_LEN + 8) as usize,
            )
        })
        .collect();
    let total = parts.iter().fold(0usize, |sum, (_, len)| sum.saturating_add(*len));
    let mut left = payload_len(total, kind)?;
    let mut data = Vec::with_capacity(left);
    for (base, len) in parts {
        if left == 0 {
            break;
        }
        let take = len.min(left);
        data.extend_from_slice(&caller.read(base, take)?);
        left -= take;
    }
    Ok(data)
}

/// The ancillary data, copied, with the job's descriptors in `SCM_RIGHTS` replaced by
/// duplicates of them (held, returned with it, until the send): passing its own open
/// files to a peer it may reach is what the job could do itself. Other socket-level
/// messages are refused (`EPERM`): `SCM_CREDENTIALS` would be checked against the
/// supervisor's process, not the job's, and could claim another pid for a root
/// service. Messages of other levels (`IP_PKTINFO`...) describe the packet and go as
/// they are.
fn ancillary(caller: &Caller<'_>, at: u64, len: u64) -> Outcome<(Vec<u8>, Vec<OwnedFd>)> {
    if at == 0 || len == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let len = usize::try_from(len).map_err(|_| Refused::Errno(libc::ENOBUFS))?;
    if len > MAX_CONTROL {
        return Err(Refused::Errno(libc::ENOBUFS));
    }
    let mut control = caller.read(at, len)?;
    let mut passed = Vec::new();
    let mut offset = 0;
    while offset + CMSG_HEADER <= control.len() {
        let cmsg_len = word(&control, offset) as usize;
        let level = i32::from_ne_bytes(control[offset + 8..offset + 12].try_into().unwrap_or_default());
        let kind = i32::from_ne_bytes(control[offset + 12..offset + 16].try_into().unwrap_or_default());
        if cmsg_len < CMSG_HEADER || cmsg_len > control.len() - offset {
            return Err(Refused::Errno(libc::EINVAL));
        }
        if level == libc::SOL_SOCKET {
            if kind != libc::SCM_RIGHTS {
                return Err(Refused::Errno(libc::EPERM));
            }
            let mut at = offset + CMSG_HEADER;
            while at + 4 <= offset + cmsg_len {
                let fd = i32::from_ne_bytes(control[at..at + 4].try_into().unwrap_or_default());
                let dup = caller.descriptor(fd as u32 as u64)?;
                control[at..at + 4].copy_from_slice(&dup.as_raw_fd().to_ne_bytes());
                passed.push(dup);
                at += 4;
            }
        }
        // CMSG_ALIGN: the next header starts at a multiple of eight.
        offset += (cmsg_len + 7) & !7;
    }
    Ok((control, passed))
}
