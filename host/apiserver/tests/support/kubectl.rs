//! The real kubectl against a test server, with the kubeconfig the server writes.

use tokio::process::Command;
use wasm_operator_apiserver::ApiServer;

/// kubectl with a kubeconfig of one server (in a temporary directory it owns).
pub struct Kubectl {
    kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// What one kubectl run printed.
pub struct Output {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Kubectl {
    /// kubectl of `server`.
    pub fn for_server(server: &ApiServer) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        Self {
            kubeconfig,
            _dir: dir,
        }
    }

    /// A kubectl command with `args` and this kubeconfig (stdio not yet set).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("kubectl");
        command.arg("--kubeconfig").arg(&self.kubeconfig).args(args);
        command
    }

    /// Runs kubectl with `args` (and `stdin`).
    pub async fn output(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut command = self.command(args);
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command
            .spawn()
            .expect("kubectl runs (.ci/run installs Debian's kubernetes-client)");
        if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
            use tokio::io::AsyncWriteExt as _;
            input.write_all(text.as_bytes()).await.expect("stdin");
        }
        let output = child.wait_with_output().await.expect("kubectl finishes");
        Output {
            success: output.status.success(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs kubectl: whether it succeeded, and stdout then stderr.
    pub async fn run(&self, args: &[&str], stdin: Option<&str>) -> (bool, String) {
        let output = self.output(args, stdin).await;
        (
            output.success,
            format!("{}{}", output.stdout, output.stderr),
        )
    }

    /// Runs kubectl, which must succeed; stdout then stderr.
    pub async fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, text) = self.run(args, stdin).await;
        assert!(ok, "kubectl {args:?} failed:\n{text}");
        text
    }

    /// Runs kubectl, which must succeed; the printed table as rows of cells, cut at the
    /// header's column starts (kubectl aligns every row to them), so an empty cell is ""
    /// and a header like `FIRST PORT` stays one cell.
    pub async fn table(&self, args: &[&str]) -> Vec<Vec<String>> {
        let output = self.output(args, None).await;
        assert!(
            output.success,
            "kubectl {args:?} failed:\n{}{}",
            output.stdout, output.stderr
        );
        let lines: Vec<&str> = output
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect();
        let Some(header) = lines.first() else {
            return Vec::new();
        };
        // A column starts at a non-space after two spaces (or at the line's start).
        let bytes = header.as_bytes();
        let starts: Vec<usize> = (0..bytes.len())
            .filter(|&i| bytes[i] != b' ' && (i == 0 || (i >= 2 && &bytes[i - 2..i] == b"  ")))
            .collect();
        lines
            .iter()
            .map(|line| {
                starts
                    .iter()
                    .enumerate()
                    .map(|(n, &start)| {
                        let end = starts.get(n + 1).copied().unwrap_or(usize::MAX);
                        line.get(start.min(line.len())..end.min(line.len()))
                            .unwrap_or_default()
                            .trim()
                            .to_owned()
                    })
                    .collect()
            })
            .collect()
    }
}
