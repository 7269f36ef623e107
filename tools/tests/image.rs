//! wavejit where CI users take it from: the root filesystem `scripts/image.sh` makes (the container image's), and
//! the composite GitHub Action (`action.yml`) run step by step in a clean Debian 12 root filesystem, as a runner
//! runs it. Both root filesystems come from Debian's archive (mmdebstrap, which scripts/setup.sh installs) and
//! are entered with `chroot` in a mount namespace of their own, so these tests need root and the network.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

mod support;
use support::{text, wavejit, workspace};

/// This run's directory, under the target directory (the root filesystems take about 1 GB each).
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let o = Command::new("id").arg("-u").output().expect("running id");
        assert_eq!(
            text(&o.stdout).trim(),
            "0",
            "these tests build root filesystems and enter them with chroot: run them as root"
        );
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace().join("target"));
        // one directory, emptied at the start: what a run leaves (the tarball) is gone with the next one
        let d = target.join("image-tests");
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// The release tarball of this checkout (scripts/package.sh over the release build).
fn release_tarball() -> &'static Path {
    static TARBALL: OnceLock<PathBuf> = OnceLock::new();
    TARBALL.get_or_init(|| {
        wavejit();
        let o = Command::new("bash")
            .arg(workspace().join("scripts/package.sh"))
            .args(["--no-build", "--out"])
            .arg(scratch())
            .output()
            .expect("running scripts/package.sh");
        assert!(o.status.success(), "package.sh: {}", text(&o.stderr));
        PathBuf::from(text(&o.stdout).lines().last().expect("the tarball's path").to_string())
    })
}

/// Serves `file` over HTTP on the loopback interface (whatever path is asked for) for the rest of the test, as a
/// release's download address would; returns its URL and the count of requests answered.
fn serve(file: &Path) -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().unwrap().port();
    let bytes = std::fs::read(file).unwrap();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().map_while(Result::ok) {
            let (mut request, mut buf) = (Vec::new(), [0u8; 1024]);
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                bytes.len()
            );
            if s.write_all(head.as_bytes()).and_then(|()| s.write_all(&bytes)).is_ok() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    (format!("http://127.0.0.1:{port}/wavejit.tar.gz"), served)
}

/// Runs `script` with bash inside the root filesystem `root` (proc, dev and sys mounted, the host's DNS
/// resolver), with only `env` and a plain PATH in its environment.
fn enter(root: &Path, script: &str, env: &[(String, String)]) -> Output {
    std::fs::copy("/etc/resolv.conf", root.join("etc/resolv.conf")).expect("copying /etc/resolv.conf");
    let mut vars = vec!["HOME=/root".to_string()];
    if !env.iter().any(|(k, _)| k == "PATH") {
        vars.push("PATH=/usr/local/bin:/usr/bin:/bin".to_string());
    }
    vars.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
    Command::new("unshare")
        .args(["--mount", "--fork", "--", "sh", "-c"])
        .arg(
            r#"root=$1; shift; mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" && mount --rbind /sys "$root/sys" && exec chroot "$root" /usr/bin/env -i "$@""#,
        )
        .arg("enter")
        .arg(root)
        .args(&vars)
        .args(["/bin/bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .output()
        .expect("running unshare and chroot")
}

#[test]
fn the_images_root_filesystem_runs_the_demo_and_a_hip_program_built_inside_it() {
    let root = scratch().join("image");
    let o = Command::new("bash")
        .arg(workspace().join("scripts/image.sh"))
        .arg("--tarball")
        .arg(release_tarball())
        .arg("--dir")
        .arg(&root)
        .output()
        .expect("running scripts/image.sh");
    assert!(o.status.success(), "image.sh: {}{}", text(&o.stdout), text(&o.stderr));
    assert_eq!(
        text(&o.stdout).trim(),
        root.display().to_string(),
        "image.sh names what it made"
    );
    std::fs::copy(
        workspace().join("runtime-shim/tests/hip/vadd.hip"),
        root.join("tmp/vadd.hip"),
    )
    .unwrap();
    // the README's main command (the demo, then the start of a disassembly), then a HIP program
    let o = enter(
        &root,
        "wavejit --version; wavejit demo; wavejit disasm | head -n 16; cd /tmp; \
         hipcc --offload-arch=gfx90a vadd.hip -o vadd; wavejit exec -- ./vadd",
        &[],
    );
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(
        out.starts_with(&format!("wavejit {}", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    assert!(out.contains("all kernels match their CPU references"), "{out}");
    assert!(out.contains("s_load_dwordx"), "no disassembly: {out}");
    assert!(
        out.contains("MI210 (gfx90a") && out.contains(": 0 of 100000 wrong"),
        "{out}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// `${{ … }}` expressions in `s`, each replaced by what `value` says; an expression it does not know fails.
fn expand(s: &str, value: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("an unclosed ${{") + start;
        let expr = rest[start + 3..end].trim();
        out.push_str(
            &value(expr).unwrap_or_else(|| panic!("action.yml uses `{expr}`, which this test does not provide")),
        );
        rest = &rest[end + 2..];
    }
    out + rest
}

/// `NAME=value` lines of a GitHub command file (GITHUB_OUTPUT).
fn command_file(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_github_action_installs_wavejit_and_rocm_into_a_clean_debian_12_and_runs_a_hip_test_under_it() {
    let action: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(workspace().join("action.yml")).unwrap()).expect("action.yml");
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    let root = scratch().join("clean");
    // what a `container: debian:12` job starts from: Debian's apt variant, no certificates, no curl
    let o = Command::new("mmdebstrap")
        .args(["--variant=apt", "bookworm"])
        .arg(&root)
        .output()
        .expect("running mmdebstrap (scripts/setup.sh installs it)");
    assert!(o.status.success(), "mmdebstrap: {}", text(&o.stderr));

    // the runner's side: the action's checkout, the job's workspace, the command files
    let action_dir = root.join("action");
    std::fs::create_dir_all(action_dir.join("scripts")).unwrap();
    for f in ["action.yml", "Cargo.toml", "scripts/package.sh"] {
        std::fs::copy(workspace().join(f), action_dir.join(f)).unwrap();
    }
    std::fs::create_dir_all(root.join("runner/temp")).unwrap();
    std::fs::create_dir_all(root.join("job")).unwrap();
    // the tarball comes by HTTP, as a release's does (the action downloads it with curl)
    let (url, served) = serve(release_tarball());
    std::fs::copy(
        workspace().join("runtime-shim/tests/hip/vadd.hip"),
        root.join("job/vadd.hip"),
    )
    .unwrap();

    let given: BTreeMap<&str, &str> = [
        ("tarball", url.as_str()),
        ("device", "mi210"),
        ("memcheck", "true"),
        (
            "command",
            "cd /job && hipcc --offload-arch=gfx90a vadd.hip -o vadd && ./vadd",
        ),
    ]
    .into();
    let inputs: BTreeMap<String, String> = action["inputs"]
        .as_mapping()
        .expect("inputs")
        .iter()
        .map(|(k, v)| {
            let k = k.as_str().unwrap().to_string();
            let default = v["default"].as_str().unwrap_or("").to_string();
            (
                k.clone(),
                given.get(k.as_str()).map(|g| g.to_string()).unwrap_or(default),
            )
        })
        .collect();
    for k in given.keys() {
        assert!(inputs.contains_key(*k), "action.yml has no input {k}");
    }

    let started = std::time::Instant::now();
    let mut outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string();
    let mut last = String::new();
    for (n, step) in action["runs"]["steps"].as_sequence().expect("steps").iter().enumerate() {
        assert_eq!(step["shell"].as_str(), Some("bash"), "step {n} runs in bash");
        let value = |expr: &str| -> Option<String> {
            if let Some(name) = expr.strip_prefix("inputs.") {
                return inputs.get(name).cloned();
            }
            if let Some(rest) = expr.strip_prefix("steps.") {
                let (id, key) = rest.split_once(".outputs.")?;
                return Some(outputs.get(id)?.get(key).cloned().unwrap_or_default());
            }
            match expr {
                "github.action_path" => Some("/action".into()),
                "github.action_repository" => Some(String::new()),
                _ => None,
            }
        };
        for f in ["output", "path", "env"] {
            std::fs::write(root.join(format!("runner/{f}")), "").unwrap();
        }
        let mut env = vec![
            ("PATH".to_string(), path.clone()),
            ("RUNNER_TEMP".to_string(), "/runner/temp".to_string()),
            ("GITHUB_OUTPUT".to_string(), "/runner/output".to_string()),
            ("GITHUB_PATH".to_string(), "/runner/path".to_string()),
            ("GITHUB_ENV".to_string(), "/runner/env".to_string()),
        ];
        if let Some(vars) = step["env"].as_mapping() {
            for (k, v) in vars {
                env.push((
                    k.as_str().unwrap().to_string(),
                    expand(v.as_str().unwrap_or(""), &value),
                ));
            }
        }
        let script = expand(step["run"].as_str().expect("a run step"), &value);
        let o = enter(&root, &script, &env);
        let name = step["name"].as_str().unwrap_or("");
        assert!(
            o.status.success(),
            "step {name}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        last = text(&o.stdout);
        if let Some(id) = step["id"].as_str() {
            outputs.insert(id.to_string(), command_file(&root.join("runner/output")));
        }
        for dir in std::fs::read_to_string(root.join("runner/path")).unwrap().lines().rev() {
            path = format!("{dir}:{path}");
        }
    }

    eprintln!("the action's steps took {:.0} s", started.elapsed().as_secs_f64());
    assert_eq!(
        served.load(Ordering::SeqCst),
        1,
        "the action downloaded the tarball from {url} once"
    );
    let value = |expr: &str| -> Option<String> {
        let (id, key) = expr.strip_prefix("steps.")?.split_once(".outputs.")?;
        outputs.get(id)?.get(key).cloned()
    };
    let bin = expand(
        action["outputs"]["path"]["value"].as_str().expect("a path output"),
        &value,
    );
    assert!(
        bin.ends_with("/bin/wavejit") && root.join(bin.trim_start_matches('/')).is_file(),
        "{bin}"
    );
    let version = expand(
        action["outputs"]["version"]["value"]
            .as_str()
            .expect("a version output"),
        &value,
    );
    assert!(
        version.starts_with(&format!("wavejit {}", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    assert!(
        last.contains("MI210 (gfx90a") && last.contains(": 0 of 100000 wrong"),
        "{last}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
