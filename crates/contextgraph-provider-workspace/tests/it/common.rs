//! Shared fixtures: a small repository covering every language, generated in
//! a temporary directory, and helpers to open and query the provider.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use contextgraph_provider_sdk::{audit_answer, Provider};
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::{ContextFrame, ContextQuery, ContextQueryResult, Timestamp};

pub const NET_RS: &str = r#"//! Networking helpers.

use crate::config::Settings;

/// Retry `op` with exponential backoff until it succeeds or
/// `max_attempts` is exhausted.
pub fn retry_loop(max_attempts: u32) -> Result<(), NetError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        if connect_once().is_ok() {
            return Ok(());
        }
        if attempt >= max_attempts {
            return Err(NetError::new("connection refused after all retries"));
        }
    }
}

fn connect_once() -> Result<(), NetError> {
    Err(NetError::new("peer unreachable"))
}

/// An error from the network layer.
#[derive(Debug)]
pub struct NetError {
    message: String,
}

impl NetError {
    /// Wrap a message.
    pub fn new(message: &str) -> NetError {
        NetError { message: message.to_owned() }
    }
}
"#;

pub const CONFIG_RS: &str = r#"/// Settings loaded from the environment.
pub struct Settings {
    pub timeout_ms: u64,
}

/// Parse the timeout from a string, in milliseconds.
pub fn parse_timeout(text: &str) -> u64 {
    text.trim().parse().unwrap_or(30_000)
}
"#;

pub const LIB_RS: &str = r#"pub mod config;
pub mod net;

/// Start the client: reads settings, then retries the connection.
pub fn start() {
    let _ = net::retry_loop(3);
}
"#;

pub const PY: &str = r#"import os
from util.helpers import slugify


class Inventory:
    """Tracks warehouse stock levels."""

    def restock(self, item, amount):
        """Add amount units of item to the shelf."""
        self.levels[item] = self.levels.get(item, 0) + amount

    def reserve(self, item):
        if self.levels.get(item, 0) <= 0:
            raise ValueError("item is out of stock")
        self.levels[item] -= 1


def load_inventory(path):
    return Inventory()
"#;

pub const PY_HELPERS: &str = r#"def slugify(title):
    """Turn a title into a url slug."""
    return title.lower().replace(" ", "-")
"#;

pub const JS: &str = r#"import { formatPrice } from './money';

/**
 * Render the shopping cart badge with the item count.
 */
export function renderCartBadge(count) {
  return `<span class="badge">${formatPrice(count)}</span>`;
}

export class CartStore {
  addItem(item) {
    this.items.push(item);
  }
}

const debounceClicks = (fn) => {
  return fn;
};
"#;

pub const JS_MONEY: &str = r#"export function formatPrice(cents) {
  return (cents / 100).toFixed(2);
}
"#;

pub const TS: &str = r#"export interface Invoice {
  id: string;
  totalCents: number;
}

/** Compute the tax owed on an invoice. */
export function computeInvoiceTax(invoice: Invoice): number {
  return invoice.totalCents * 0.2;
}

export class InvoiceQueue {
  enqueue(invoice: Invoice): void {}
}
"#;

pub const TSX: &str = r#"export function GreetingBanner(props: { name: string }) {
  return <h1>Hello {props.name}</h1>;
}
"#;

pub const GO: &str = r#"package scheduler

import "fmt"

// Scheduler runs periodic jobs.
type Scheduler struct {
	jobs []string
}

// ScheduleNightlyBackup registers the nightly backup job.
func (s *Scheduler) ScheduleNightlyBackup() {
	s.jobs = append(s.jobs, "backup")
	fmt.Println("scheduled")
}

func NewScheduler() *Scheduler {
	return &Scheduler{}
}
"#;

pub const JAVA: &str = r#"package com.example;

import java.util.List;

/** Validates customer email addresses. */
public class EmailValidator {
    /** Returns true when the address has an at sign. */
    public boolean isValidEmail(String address) {
        return address.contains("@");
    }
}
"#;

pub const C: &str = r#"#include <stdio.h>
#include "ring.h"

/* Push a byte into the ring buffer, dropping the oldest when full. */
int ring_buffer_push(struct ring *r, unsigned char byte) {
    r->data[r->head] = byte;
    return 0;
}

struct ring {
    unsigned char data[64];
    int head;
};
"#;

pub const C_HEADER: &str = "int ring_buffer_push(struct ring *r, unsigned char byte);\n";

pub const CPP: &str = r#"#include <vector>

namespace geometry {

// Area of a polygon by the shoelace formula.
double polygon_shoelace_area(const std::vector<double>& xs) {
    return xs.size() * 0.5;
}

class Matrix {
public:
    Matrix transpose_matrix() const { return *this; }
};

}
"#;

pub const README: &str = r#"# Demo workspace

A fixture used by the workspace provider tests.

## Networking

The client calls `retry_loop` when a connection drops, see `net::retry_loop()`.

## Inventory

Stock is tracked by `Inventory`.
"#;

pub const NOTES_TXT: &str = "Release checklist: bump the version, tag, publish the crate.\n";

pub const CONFIG_TOML: &str = "[server]\nlisten_port = 8080\n";

/// Every fixture file, path → content.
pub fn fixture_files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("src/lib.rs", LIB_RS),
        ("src/net.rs", NET_RS),
        ("src/config.rs", CONFIG_RS),
        ("app/inventory.py", PY),
        ("util/helpers.py", PY_HELPERS),
        ("web/cart.js", JS),
        ("web/money.js", JS_MONEY),
        ("web/invoice.ts", TS),
        ("web/banner.tsx", TSX),
        ("go/scheduler.go", GO),
        ("java/com/example/EmailValidator.java", JAVA),
        ("c/ring.c", C),
        ("c/ring.h", C_HEADER),
        ("cpp/geometry.cpp", CPP),
        ("README.md", README),
        ("docs/notes.txt", NOTES_TXT),
        ("config.toml", CONFIG_TOML),
    ]
}

/// A fixture repository in a temporary directory, with its own cache base.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub cache: tempfile::TempDir,
    pub clock: Arc<AtomicI64>,
}

impl Fixture {
    pub fn new() -> Fixture {
        let f = Fixture::empty();
        for (path, content) in fixture_files() {
            f.write(path, content);
        }
        f
    }

    pub fn empty() -> Fixture {
        Fixture {
            dir: tempfile::tempdir().expect("temp dir"),
            cache: tempfile::tempdir().expect("temp cache dir"),
            clock: Arc::new(AtomicI64::new(1_800_000_000)),
        }
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("canonical root")
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) {
        self.write_bytes(rel, content.as_bytes());
    }

    pub fn write_bytes(&self, rel: &str, content: &[u8]) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, content).expect("write fixture file");
    }

    /// Options with the cache in this fixture's cache dir and a manual clock
    /// (seconds since the epoch; advance it with [`tick`](Self::tick)).
    pub fn options(&self) -> WorkspaceOptions {
        let clock = self.clock.clone();
        WorkspaceOptions {
            cache: CacheLocation::Base(self.cache.path().to_path_buf()),
            clock: Arc::new(move || Timestamp::from_unix(clock.load(Ordering::SeqCst), 0)),
            threads: 2,
            ..WorkspaceOptions::default()
        }
    }

    /// Advance the clock by `secs`; returns the new time.
    pub fn tick(&self, secs: i64) -> Timestamp {
        Timestamp::from_unix(self.clock.fetch_add(secs, Ordering::SeqCst) + secs, 0)
    }

    pub fn now(&self) -> Timestamp {
        Timestamp::from_unix(self.clock.load(Ordering::SeqCst), 0)
    }

    pub fn open(&self) -> WorkspaceProvider {
        WorkspaceProvider::open(self.dir.path(), self.options())
            .expect("open workspace")
            .0
    }

    pub fn file_uri(&self, rel: &str) -> String {
        contextgraph_provider_sdk::path_to_file_uri(&self.root().join(rel)).expect("uri")
    }
}

/// A query for `text` with a generous budget.
pub fn q(text: &str) -> ContextQuery {
    ContextQuery::new(text, 10, 20_000)
}

/// Query and assert the answer passes the SDK's full honesty audit
/// (B1, B3, B4, Q1, as_of, F1–F5 grammar, D1 recomputed, P1–P5, G1–G2).
pub fn ask(p: &WorkspaceProvider, query: &ContextQuery) -> ContextQueryResult {
    let result = p.query(query).expect("query answered");
    let violations = audit_answer(query, &result, &p.capabilities());
    assert!(
        violations.is_empty(),
        "answer violates the protocol: {violations:#?}"
    );
    result
}

pub fn ids(result: &ContextQueryResult) -> Vec<&str> {
    result.frames.iter().map(|f| f.id.as_str()).collect()
}

pub fn find<'a>(result: &'a ContextQueryResult, id: &str) -> Option<&'a ContextFrame> {
    result.frames.iter().find(|f| f.id == id)
}

/// Re-read a frame's file provenance from disk and hash exactly the range (F5).
pub fn reread_digest(frame: &ContextFrame) -> Option<String> {
    let p = frame.file_provenance().next()?;
    let path = contextgraph_provider_sdk::file_uri_to_path(p.uri.as_deref()?).ok()?;
    let bytes = std::fs::read(path).ok()?;
    let range = contextgraph_types::LineRange::parse(p.range.as_deref()?)?;
    let region = contextgraph_provider_sdk::read_range(&bytes, range)?;
    Some(contextgraph_provider_sdk::sha256_digest(region))
}
