//! `wasm-operator wasi-run`: the `wasm32-wasip2` test runner.
//!
//! Cargo runs `wasm-operator wasi-run <test.wasm> [libtest args]` for every wasm test
//! binary (see `.cargo/config.toml`). The binary is a `wasi:cli/run` command component; it
//! runs on the host's own engine and artifact cache, with stdio and environment inherited
//! and the current directory (the package) preopened as `.`. Imports other than WASI (a
//! plugin's `cluster`, say) trap when called, except logging: unit tests run without a host.
//! `wasi:http/outgoing-handler` is linked (a plugin with HTTP egress imports it) and denies
//! every request, as a unit test natively gets no HTTP either.
//!
//! wasm32-wasip2 is `panic=abort`: one failing test would abort the whole binary with no
//! summary, and `#[should_panic]` tests cannot pass. So a libtest harness is run one test
//! per instance: the runner lists the tests (`--list`, honouring the filters it was given),
//! runs each in a fresh instance with `--exact`, and prints libtest's report itself — the
//! failing test's output included — exiting 101 when any failed.

use std::path::Path;
use std::time::Instant;

use sha2::{Digest, Sha256};
use wasmtime::Store;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::p2::bindings::CommandPre;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{
    RequestOptions, WasiBody, WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView,
};

use crate::Runtime;
use crate::capabilities::http::{IoFuture, SendFuture};

/// How long one run (one test, or a listing) may take before it is interrupted.
const TEST_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

/// Most output kept from one test.
const OUTPUT_CAPACITY: usize = 16 << 20;

/// Why a wasm binary could not be run.
#[derive(Debug, thiserror::Error)]
pub enum WasiRunError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Compile {
        path: String,
        #[source]
        source: crate::cache::CacheError,
    },
    #[error("{path}: not a wasi:cli/run command component: {message}")]
    NotACommand { path: String, message: String },
    #[error("{path}: cannot preopen the current directory: {message}")]
    Preopen { path: String, message: String },
    #[error("{path}: the test listing failed: {output}")]
    List { path: String, output: String },
}

struct RunState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    deny: DenyEveryRequest,
}

impl WasiView for RunState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for RunState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.deny,
        }
    }
}

/// The send hook of a test run: every request is denied before a socket is opened.
struct DenyEveryRequest;

impl WasiHttpHooks for DenyEveryRequest {
    fn send_request(
        &mut self,
        _request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: IoFuture,
    ) -> SendFuture {
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}

/// How a run ended.
struct Exit {
    code: i32,
    /// What the guest printed, when it was captured.
    output: String,
}

/// A command component ready to run.
struct Command<'a> {
    runtime: &'a Runtime,
    pre: CommandPre<RunState>,
    path: String,
}

impl Command<'_> {
    /// Runs the command once with `args` (after the program name).
    async fn run(&self, args: &[String], capture: bool) -> Result<Exit, WasiRunError> {
        let mut builder = WasiCtxBuilder::new();
        let mut argv = vec![self.path.clone()];
        argv.extend(args.iter().cloned());
        builder.args(&argv).inherit_env();
        builder
            .preopened_dir(".", ".", FsPerms::ReadWrite)
            .map_err(|e| WasiRunError::Preopen {
                path: self.path.clone(),
                message: format!("{e:#}"),
            })?;
        let output = MemoryOutputPipe::new(OUTPUT_CAPACITY);
        if capture {
            builder.stdout(output.clone()).stderr(output.clone());
        } else {
            builder.inherit_stdio();
        }
        let mut store = Store::new(
            self.runtime.engine(),
            RunState {
                wasi: builder.build(),
                table: ResourceTable::new(),
                http: WasiHttpCtx::new(),
                deny: DenyEveryRequest,
            },
        );
        store.set_epoch_deadline(self.runtime.ticks(TEST_DEADLINE));
        let result = match self.pre.instantiate_async(&mut store).await {
            Ok(command) => command.wasi_cli_run().call_run(&mut store).await,
            Err(e) => Err(e),
        };
        let code = match result {
            Ok(Ok(())) => 0,
            Ok(Err(())) => 1,
            Err(e) => match e.downcast_ref::<I32Exit>() {
                Some(exit) => exit.0,
                None => {
                    let message = format!("\nwasm-operator wasi-run: the guest trapped: {e:#}\n");
                    if capture {
                        return Ok(Exit {
                            code: 101,
                            output: format!("{}{message}", text(&output)),
                        });
                    }
                    eprint!("{message}");
                    101
                }
            },
        };
        Ok(Exit {
            code,
            output: if capture {
                text(&output)
            } else {
                String::new()
            },
        })
    }
}

fn text(pipe: &MemoryOutputPipe) -> String {
    String::from_utf8_lossy(&pipe.contents()).into_owned()
}

/// Runs the command component at `wasm` with `args`; returns the process exit code.
pub async fn run(runtime: &Runtime, wasm: &Path, args: &[String]) -> Result<i32, WasiRunError> {
    let path = wasm.display().to_string();
    let bytes = std::fs::read(wasm).map_err(|source| WasiRunError::Read {
        path: path.clone(),
        source,
    })?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let (component, _) = runtime
        .cache()
        .component(runtime.engine(), &bytes, &sha256)
        .map_err(|source| WasiRunError::Compile {
            path: path.clone(),
            source,
        })?;
    let not_a_command = |e: wasmtime::Error| WasiRunError::NotACommand {
        path: path.clone(),
        message: format!("{e:#}"),
    };
    let mut linker = Linker::<RunState>::new(runtime.engine());
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(not_a_command)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(not_a_command)?;
    stub_plugin_imports(&mut linker, runtime.engine(), &component).map_err(not_a_command)?;
    let pre = CommandPre::new(linker.instantiate_pre(&component).map_err(not_a_command)?)
        .map_err(not_a_command)?;
    let command = Command { runtime, pre, path };

    if !is_libtest_run(args) {
        return Ok(command.run(args, false).await?.code);
    }
    run_tests(&command, args).await
}

/// Defines every function of the component's `wasm-operator:plugin` and `gitlab:secretgen`
/// imports as a trap, and every resource as a host type no stub ever returns — a guest crate's test binary links its plugin imports, which unit tests
/// do not call (one that does fails naming the import) — except `logging.log`, which prints
/// to stderr.
fn stub_plugin_imports(
    linker: &mut Linker<RunState>,
    engine: &wasmtime::Engine,
    component: &wasmtime::component::Component,
) -> wasmtime::Result<()> {
    use wasmtime::component::types::ComponentItem;
    for (name, item) in component.component_type().imports(engine) {
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            continue;
        };
        if ![crate::CONTRACT_PACKAGE, crate::PLANNER_PACKAGE]
            .iter()
            .any(|package| name.starts_with(package))
        {
            continue;
        }
        let mut stubs = linker.instance(name)?;
        let is_logging = name
            .strip_prefix(crate::CONTRACT_PACKAGE)
            .is_some_and(|rest| rest.starts_with("/logging@"));
        for (function, item) in instance.exports(engine) {
            if let ComponentItem::Resource(_) = item.ty {
                // A resource (the `targets` interface's `target`) is a host type no test
                // can construct: its constructors are stubbed as traps like any function.
                stubs.resource(
                    function,
                    wasmtime::component::ResourceType::host::<StubResource>(),
                    |_, _| Ok(()),
                )?;
                continue;
            }
            if let ComponentItem::ComponentFunc(_) = item.ty {
                if is_logging && function == "log" {
                    // Logging needs no host: the line goes to stderr, as the guest's own would.
                    stubs.func_new(function, |_, _, args, _| {
                        if let [level, wasmtime::component::Val::String(message)] = args {
                            eprintln!("{level:?}: {message}");
                        }
                        Ok(())
                    })?;
                    continue;
                }
                let called = format!("{name}#{function}");
                stubs.func_new(function, move |_, _, _, _| {
                    Err(wasmtime::format_err!(
                        "{called} was called, but wasi-run runs unit tests without a host"
                    ))
                })?;
            }
        }
    }
    Ok(())
}

/// The host type behind every resource a test binary imports; never instantiated.
struct StubResource;

/// Whether `args` ask a libtest harness to run tests (rather than list them, print help, …).
fn is_libtest_run(args: &[String]) -> bool {
    !args.iter().any(|a| {
        matches!(
            a.as_str(),
            "--list" | "-h" | "--help" | "--bench" | "--format=json" | "-Zunstable-options"
        )
    })
}

/// Lists the tests `args` select and runs each in its own instance.
async fn run_tests(command: &Command<'_>, args: &[String]) -> Result<i32, WasiRunError> {
    let started = Instant::now();
    let with_ignored = args
        .iter()
        .any(|a| a == "--ignored" || a == "--include-ignored");
    let selection: Vec<String> = args.iter().filter(|a| !is_run_option(a)).cloned().collect();
    let listed = list(command, &selection, false).await?;
    let ignored = if with_ignored {
        Vec::new()
    } else {
        list(command, &selection, true).await?
    };

    println!("\nrunning {} tests", listed.len());
    let (mut passed, mut failures) = (0usize, Vec::new());
    // Tests libtest itself ignores when run: `#[should_panic]` under panic=abort.
    let mut ignored_when_run = 0usize;
    for name in &listed {
        if ignored.contains(name) {
            println!("test {name} ... ignored");
            continue;
        }
        let mut test_args = vec![
            name.clone(),
            "--exact".into(),
            "--nocapture".into(),
            "--test-threads=1".into(),
        ];
        if with_ignored {
            test_args.push("--include-ignored".into());
        }
        let exit = command.run(&test_args, true).await?;
        if exit.code == 0 && libtest_ignored(&exit.output, name) {
            ignored_when_run += 1;
            println!("test {name} ... ignored");
        } else if exit.code == 0 {
            passed += 1;
            println!("test {name} ... ok");
        } else {
            println!("test {name} ... FAILED");
            failures.push((name.clone(), exit.output));
        }
    }
    if !failures.is_empty() {
        println!("\nfailures:\n");
        for (name, output) in &failures {
            println!("---- {name} stdout ----\n{output}");
        }
        println!("\nfailures:");
        for (name, _) in &failures {
            println!("    {name}");
        }
    }
    let verdict = if failures.is_empty() { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {verdict}. {passed} passed; {} failed; {} ignored; 0 measured; 0 filtered out; finished in {:.2}s\n",
        failures.len(),
        ignored.len() + ignored_when_run,
        started.elapsed().as_secs_f64()
    );
    Ok(if failures.is_empty() { 0 } else { 101 })
}

/// Whether libtest's `output` of running only `name` reports it ignored rather than run (a
/// `#[should_panic]` test under panic=abort exits 0 having run nothing).
fn libtest_ignored(output: &str, name: &str) -> bool {
    output.lines().any(|line| {
        line.strip_prefix("test ")
            .and_then(|rest| rest.strip_prefix(name))
            .is_some_and(|rest| rest.ends_with("... ignored"))
    })
}

/// Options that change how tests run, not which: dropped when listing and when running one.
fn is_run_option(arg: &str) -> bool {
    arg.starts_with("--test-threads")
        || matches!(
            arg,
            "--nocapture"
                | "--no-capture"
                | "-q"
                | "--quiet"
                | "--show-output"
                | "--ignored"
                | "--include-ignored"
        )
        || arg.starts_with("--color")
        || arg.starts_with("--format")
}

/// The names of the tests `selection` selects (the ignored ones only, with `ignored`).
async fn list(
    command: &Command<'_>,
    selection: &[String],
    ignored: bool,
) -> Result<Vec<String>, WasiRunError> {
    let mut args = selection.to_vec();
    args.extend(["--list".into(), "--format".into(), "terse".into()]);
    if ignored {
        args.push("--ignored".into());
    }
    let exit = command.run(&args, true).await?;
    if exit.code != 0 {
        return Err(WasiRunError::List {
            path: command.path.clone(),
            output: exit.output,
        });
    }
    Ok(exit
        .output
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_and_help_are_passed_through_unchanged() {
        assert!(!is_libtest_run(&["--list".into()]));
        assert!(!is_libtest_run(&["--help".into()]));
        assert!(is_libtest_run(&[
            "some_filter".into(),
            "--nocapture".into()
        ]));
    }

    #[test]
    fn a_test_libtest_ignores_when_run_is_told_from_one_that_passed() {
        let ignored = "\nrunning 1 test\ntest m::t - should panic ... ignored\n\ntest result: ok. 0 passed; 0 failed; 1 ignored";
        let passed =
            "\nrunning 1 test\ntest m::t ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored";
        assert!(libtest_ignored(ignored, "m::t"));
        assert!(!libtest_ignored(passed, "m::t"));
        assert!(!libtest_ignored(ignored, "m::other"));
    }

    #[test]
    fn run_options_are_not_selection() {
        assert!(is_run_option("--test-threads=2"));
        assert!(is_run_option("--nocapture"));
        assert!(!is_run_option("--exact"));
        assert!(!is_run_option("--skip"));
    }
}
