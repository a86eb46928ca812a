//! The raw ABI: the workbench_v1 imports, the wb_alloc export and the input
//! buffers it hands out (docs/abi.md sections 2 and 5).
//!
//! In a wasm32 build the functions here call the host. In a native build,
//! used by `rustc --test`, they are served by [`crate::testing`].

/// MAX_INPUT_BYTES caps one wb_alloc request. The host's input limit is
/// 4 MiB; anything far beyond it is refused with 0 rather than aborting on
/// an impossible allocation.
pub const MAX_INPUT_BYTES: u32 = 64 << 20;

/// HttpResult is what http_request returns: the head JSON and the body, or
/// the host's error JSON.
pub type HttpResult = Result<(Vec<u8>, Vec<u8>), Vec<u8>>;

/// alloc_zeroed returns a zeroed buffer of n bytes, or None when memory
/// cannot be had (instead of aborting).
pub fn alloc_zeroed(n: usize) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(n).ok()?;
    buf.resize(n, 0);
    Some(buf)
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::{alloc_zeroed, HttpResult, MAX_INPUT_BYTES};
    use std::cell::RefCell;

    #[link(wasm_import_module = "workbench_v1")]
    extern "C" {
        fn output_set(ptr: *const u8, len: u32);
        fn result_read(ptr: *mut u8, len: u32) -> i32;
        fn log(level: i32, ptr: *const u8, len: u32);
        fn config_get(key_ptr: *const u8, key_len: u32) -> i32;
        fn progress(done: f64, total: f64, msg_ptr: *const u8, msg_len: u32);
        fn http_request(req_ptr: *const u8, req_len: u32, body_ptr: *const u8, body_len: u32) -> i64;
    }

    thread_local! {
        /// INPUTS holds the buffers wb_alloc handed out until a tool takes
        /// them, keyed by their address.
        static INPUTS: RefCell<Vec<(u32, Vec<u8>)>> = RefCell::new(Vec::new());
    }

    /// wb_alloc is the allocator the host uses to pass a call's input.
    #[no_mangle]
    pub extern "C" fn wb_alloc(size: u32) -> u32 {
        if size > MAX_INPUT_BYTES {
            return 0;
        }
        let mut buf = match alloc_zeroed(size.max(1) as usize) {
            Some(b) => b,
            None => return 0,
        };
        buf.truncate(size as usize);
        let ptr = buf.as_mut_ptr() as usize as u32;
        let kept = INPUTS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut bufs) => {
                bufs.push((ptr, buf));
                true
            }
            Err(_) => false,
        });
        if kept {
            ptr
        } else {
            0
        }
    }

    pub fn take_input(ptr: u32, len: u32) -> Option<Vec<u8>> {
        INPUTS.with(|cell| {
            let mut bufs = cell.try_borrow_mut().ok()?;
            let taken = bufs.iter().position(|(p, _)| *p == ptr).map(|i| bufs.swap_remove(i).1);
            // Buffers of calls that never ran are freed here.
            bufs.clear();
            if ptr == 0 && len == 0 {
                return Some(Vec::new());
            }
            let mut buf = taken?;
            if len as usize > buf.len() {
                return None;
            }
            buf.truncate(len as usize);
            Some(buf)
        })
    }

    pub fn output_set_bytes(b: &[u8]) {
        unsafe { output_set(b.as_ptr(), b.len() as u32) }
    }

    /// read_result copies the pending result of n bytes.
    fn read_result(n: usize) -> Option<Vec<u8>> {
        let mut buf = alloc_zeroed(n)?;
        if n == 0 {
            return Some(buf);
        }
        let got = unsafe { result_read(buf.as_mut_ptr(), n as u32) };
        if got < 0 || got as usize != n {
            return None;
        }
        Some(buf)
    }

    pub fn config_get_bytes(key: &str) -> Option<Vec<u8>> {
        let n = unsafe { config_get(key.as_ptr(), key.len() as u32) };
        if n < 0 {
            return None;
        }
        read_result(n as usize)
    }

    pub fn log_message(level: i32, msg: &str) {
        unsafe { log(level, msg.as_ptr(), msg.len() as u32) }
    }

    pub fn progress_report(done: f64, total: f64, msg: &str) {
        unsafe { progress(done, total, msg.as_ptr(), msg.len() as u32) }
    }

    pub fn http(head: &[u8], body: &[u8]) -> HttpResult {
        let ret = unsafe { http_request(head.as_ptr(), head.len() as u32, body.as_ptr(), body.len() as u32) };
        if ret < 0 {
            let n = match ret.checked_neg() {
                Some(n) if n <= u32::MAX as i64 => n as usize,
                _ => return Err(br#"{"code":"TOOL_ERROR","message":"http_request returned an impossible error length"}"#.to_vec()),
            };
            return match read_result(n) {
                Some(e) => Err(e),
                None => Err(br#"{"code":"TOOL_ERROR","message":"could not read the host's error for http_request"}"#.to_vec()),
            };
        }
        let head_len = (ret as u64 >> 32) as usize;
        let body_len = (ret as u64 & 0xffff_ffff) as usize;
        let total = match head_len.checked_add(body_len) {
            Some(t) if t as u64 <= u32::MAX as u64 => t,
            _ => return Err(br#"{"code":"TOOL_ERROR","message":"http_request returned an impossible response length"}"#.to_vec()),
        };
        let mut all = match read_result(total) {
            Some(b) => b,
            None => return Err(br#"{"code":"TOOL_ERROR","message":"could not read the host's response for http_request"}"#.to_vec()),
        };
        // The head is small; draining it leaves the body in place.
        let head: Vec<u8> = all.drain(..head_len).collect();
        Ok((head, all))
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::HttpResult;
    use crate::testing;

    pub fn output_set_bytes(b: &[u8]) {
        testing::record_output(b);
    }

    pub fn config_get_bytes(key: &str) -> Option<Vec<u8>> {
        testing::config_value(key).map(String::into_bytes)
    }

    pub fn log_message(level: i32, msg: &str) {
        testing::record_log(level, msg);
    }

    pub fn progress_report(done: f64, total: f64, msg: &str) {
        testing::record_progress(done, total, msg);
    }

    pub fn http(head: &[u8], body: &[u8]) -> HttpResult {
        testing::serve_http(head, body)
    }
}

pub use imp::*;
