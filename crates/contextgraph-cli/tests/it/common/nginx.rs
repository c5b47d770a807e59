//! nginx in front of `cgp` replicas, for the failover test and the
//! replica benchmark (`benches/replicas.rs` includes this file): the
//! shipped `deploy/nginx/cgp-shard.conf`, its addresses rewritten to the
//! replicas', run on loopback as a foreground process (`daemon off`) with
//! its own prefix, pid file, logs and temp paths in a temporary directory.
//! Dropping it stops it.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::http;

/// The shipped configuration, relative to this crate.
const SHARD_CONF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../deploy/nginx/cgp-shard.conf"
);

/// The replica addresses and the listen address written in it.
const SHIPPED_REPLICAS: [&str; 3] = ["127.0.0.1:7801", "127.0.0.1:7802", "127.0.0.1:7803"];
const SHIPPED_LISTEN: &str = "listen 127.0.0.1:8080;";

/// The nginx binary on this machine, if any.
pub fn find_nginx() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|d| d.join("nginx"))
        .find(|p| p.is_file())
}

/// The nginx binary, or `None` after saying why the caller skips: absent
/// nginx is a failure under CI (`CI=true`, where `.ci/run` installs it)
/// and a loud skip elsewhere.
pub fn nginx_or_skip(what: &str) -> Option<PathBuf> {
    if let Some(found) = find_nginx() {
        return Some(found);
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(
        !ci,
        "{what}: nginx is not installed, and CI=true requires this test to run; \
         .ci/run installs it (apt-get install -y nginx-light)"
    );
    eprintln!(
        "SKIPPED {what}: nginx is not installed (apt-get install -y nginx-light); \
         it runs under CI=true, where a missing nginx fails"
    );
    None
}

/// The shipped shard configuration with `replicas` and `listen` put in.
pub fn shard_config(replicas: &[SocketAddr; 3], listen: SocketAddr) -> String {
    let shipped =
        std::fs::read_to_string(SHARD_CONF).unwrap_or_else(|e| panic!("{SHARD_CONF}: {e}"));
    let mut conf = shipped.clone();
    for (from, to) in SHIPPED_REPLICAS.iter().zip(replicas) {
        assert_eq!(
            shipped.matches(from).count(),
            1,
            "{SHARD_CONF} names replica {from} once"
        );
        conf = conf.replace(from, &to.to_string());
    }
    assert_eq!(
        shipped.matches(SHIPPED_LISTEN).count(),
        1,
        "{SHARD_CONF} has `{SHIPPED_LISTEN}` once"
    );
    conf.replace(SHIPPED_LISTEN, &format!("listen {listen};"))
}

/// A running nginx.
pub struct Nginx {
    child: Child,
    prefix: tempfile::TempDir,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Nginx {
    /// Start `nginx` balancing over `replicas` on a free loopback port, and
    /// wait (bounded) until a probe through it is answered.
    pub fn start(nginx: &Path, replicas: &[SocketAddr; 3]) -> Nginx {
        let prefix = tempfile::tempdir().unwrap();
        let p = prefix.path();
        // Workers run as an unprivileged user when the master is root: they
        // must reach the temp paths (nginx chowns those it creates).
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::create_dir(p.join("tmp")).unwrap();
        std::fs::set_permissions(
            p.join("tmp"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let addr = free_port();
        std::fs::write(p.join("cgp-shard.conf"), shard_config(replicas, addr)).unwrap();
        let d = p.display();
        let main = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  access_log off;\n\
             client_body_temp_path {d}/tmp/body;\n  proxy_temp_path {d}/tmp/proxy;\n\
             fastcgi_temp_path {d}/tmp/fastcgi;\n  uwsgi_temp_path {d}/tmp/uwsgi;\n\
             scgi_temp_path {d}/tmp/scgi;\n  include {d}/cgp-shard.conf;\n}}\n"
        );
        std::fs::write(p.join("nginx.conf"), main).unwrap();
        let child = Command::new(nginx)
            .arg("-p")
            .arg(p)
            .arg("-e")
            .arg(p.join("error.log"))
            .arg("-c")
            .arg(p.join("nginx.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", nginx.display()));
        let mut n = Nginx {
            child,
            prefix,
            addr,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = n.child.try_wait() {
                panic!("nginx exited at start ({status}): {}", n.error_log());
            }
            if http::request(addr, "GET", "/healthz", b"", Duration::from_secs(2))
                .is_ok_and(|r| r.status == 200)
            {
                return n;
            }
            assert!(
                Instant::now() < deadline,
                "nginx never answered a probe: {}",
                n.error_log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What nginx logged (its error log, at level info).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.prefix.path().join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port free a moment ago (nginx binds it itself).
fn free_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}
