//! A TCP relay between a client and a store on 127.0.0.1 that can go silent (a partition) or
//! stall (a slow link: bytes held, then delivered).

use std::net::TcpListener;

/// A TCP relay on 127.0.0.1 to `target`: bytes pass both ways until `silence(true)`, after which
/// they are read and dropped (connections stay open, nothing arrives: a partition), or
/// `stall(true)`, after which they are held until `stall(false)` and then delivered in order (a
/// link that stalls: a request sent meanwhile arrives late, after its sender gave up on it).
pub struct Relay {
    pub port: u16,
    silent: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stalled: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Relay {
    pub fn start(target: u16) -> Relay {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let silent = Arc::new(AtomicBool::new(false));
        let stalled = Arc::new(AtomicBool::new(false));
        let flag = silent.clone();
        let hold = stalled.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(inbound) = conn else { continue };
                let Ok(outbound) = std::net::TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                for (from, to) in [
                    (inbound.try_clone().unwrap(), outbound.try_clone().unwrap()),
                    (outbound, inbound),
                ] {
                    let flag = flag.clone();
                    let hold = hold.clone();
                    std::thread::spawn(move || pump(from, to, &flag, &hold));
                }
            }
        });
        Relay {
            port,
            silent,
            stalled,
        }
    }

    pub fn silence(&self, on: bool) {
        self.silent.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn stall(&self, on: bool) {
        self.stalled.store(on, std::sync::atomic::Ordering::SeqCst);
    }
}

fn pump(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    silent: &std::sync::atomic::AtomicBool,
    stalled: &std::sync::atomic::AtomicBool,
) {
    use std::io::{Read, Write};
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if silent.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                while stalled.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Both);
}
