//! Process lifetime: the scratch folder holding the built-in corpus, and the
//! ways the process ends.
//!
//! Several modes end the process from wherever they are (a crash on the
//! reader thread, a broken pipe on the writer thread), so ending goes
//! through one place that removes the scratch folder first: the built-in
//! corpus files must not outlive the provider, whichever way it stops.

use std::io::Write;
use std::sync::Mutex;

use tempfile::TempDir;

/// Owns the scratch folder (if any) and ends the process.
#[derive(Debug)]
pub struct Lifecycle {
    name: String,
    scratch: Mutex<Option<TempDir>>,
}

impl Lifecycle {
    /// A lifecycle of the provider `name` owning `scratch`, which is deleted on exit.
    pub fn new(name: &str, scratch: Option<TempDir>) -> Self {
        Lifecycle {
            name: name.to_owned(),
            scratch: Mutex::new(scratch),
        }
    }

    /// The provider name, for messages written on the way out.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Delete the scratch folder now (idempotent). A failure is reported on
    /// stderr and otherwise ignored: there is nothing better to do on the
    /// way out.
    pub fn remove_scratch(&self) {
        let taken = self
            .scratch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(dir) = taken {
            let path = dir.path().to_path_buf();
            if let Err(e) = dir.close() {
                eprintln!(
                    "{}: could not delete the corpus folder {}: {e}; delete it by hand",
                    self.name,
                    path.display()
                );
            }
        }
    }

    /// Delete the scratch folder and end the process with `code`.
    pub fn exit(&self, code: i32) -> ! {
        self.remove_scratch();
        let _ = std::io::stderr().flush();
        std::process::exit(code)
    }
}

impl Drop for Lifecycle {
    fn drop(&mut self) {
        self.remove_scratch();
    }
}
