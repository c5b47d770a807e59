//! Chunking and symbols: every supported language yields `symbol` frames for
//! its definitions with readable qualified names; Markdown yields `doc`
//! sections; other files fall back to `snippet` windows; a file its grammar
//! cannot parse degrades to windows without failing anything else.

use crate::common::{ask, q, Fixture};
use contextgraph_provider_workspace::chunk::{chunk_file, ChunkKind};
use contextgraph_provider_workspace::Language;
use contextgraph_types::FrameKind;

fn symbols(rel: &str, text: &str) -> Vec<String> {
    chunk_file(rel, Language::detect(rel), text)
        .into_iter()
        .filter(|c| c.kind == ChunkKind::Symbol)
        .map(|c| c.local_id)
        .collect()
}

#[test]
fn every_language_yields_symbol_chunks_with_qualified_names() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "src/net.rs",
            crate::common::NET_RS,
            &[
                "net::retry_loop",
                "net::connect_once",
                "net::NetError",
                "net::impl NetError",
                "net::NetError::new",
            ],
        ),
        (
            "app/inventory.py",
            crate::common::PY,
            &[
                "app.inventory.Inventory",
                "app.inventory.Inventory.restock",
                "app.inventory.Inventory.reserve",
                "app.inventory.load_inventory",
            ],
        ),
        (
            "web/cart.js",
            crate::common::JS,
            &[
                "renderCartBadge",
                "CartStore",
                "CartStore.addItem",
                "debounceClicks",
            ],
        ),
        (
            "web/invoice.ts",
            crate::common::TS,
            &[
                "Invoice",
                "computeInvoiceTax",
                "InvoiceQueue",
                "InvoiceQueue.enqueue",
            ],
        ),
        ("web/banner.tsx", crate::common::TSX, &["GreetingBanner"]),
        (
            "go/scheduler.go",
            crate::common::GO,
            &[
                "Scheduler",
                "Scheduler.ScheduleNightlyBackup",
                "NewScheduler",
            ],
        ),
        (
            "java/com/example/EmailValidator.java",
            crate::common::JAVA,
            &["EmailValidator", "EmailValidator.isValidEmail"],
        ),
        ("c/ring.c", crate::common::C, &["ring_buffer_push", "ring"]),
        (
            "cpp/geometry.cpp",
            crate::common::CPP,
            &[
                "geometry::polygon_shoelace_area",
                "geometry::Matrix",
                "geometry::Matrix::transpose_matrix",
                "geometry",
            ],
        ),
    ];
    for (rel, text, expected) in cases {
        let got = symbols(rel, text);
        for e in *expected {
            assert!(
                got.iter().any(|g| g == e),
                "{rel}: expected symbol {e:?}, got {got:?}"
            );
        }
    }
}

#[test]
fn symbol_regions_carry_doc_comments_and_attributes() {
    let chunks = chunk_file("src/net.rs", Language::Rust, crate::common::NET_RS);
    let retry = chunks
        .iter()
        .find(|c| c.local_id == "net::retry_loop")
        .expect("retry_loop chunk");
    // The doc comment starts on line 5; the function ends on line 18.
    assert_eq!((retry.start_line, retry.end_line), (5, 18));
    let err = chunks
        .iter()
        .find(|c| c.local_id == "net::NetError")
        .expect("NetError chunk");
    assert_eq!(
        err.start_line, 24,
        "doc comment and #[derive] belong to the struct"
    );
    assert!(
        retry.calls.iter().any(|c| c == "connect_once"),
        "{:?}",
        retry.calls
    );
}

#[test]
fn markdown_becomes_doc_sections_and_other_files_become_windows() {
    let f = Fixture::new();
    let p = f.open();
    let r = ask(&p, &q("networking retry"));
    let doc = r
        .frames
        .iter()
        .find(|fr| fr.kind == FrameKind::Doc)
        .expect("a doc frame");
    assert_eq!(doc.id, "README.md#networking");
    assert!(doc.relations.iter().any(|rel| rel.rel == "doc.documents"
        && rel.target_uri == format!("{}#net::retry_loop", f.file_uri("src/net.rs"))));
    let toml = ask(&p, &q("listen_port"));
    let w = toml
        .frames
        .iter()
        .find(|fr| fr.id == "config.toml#L1-2")
        .expect("toml window");
    assert_eq!(w.kind, FrameKind::Snippet);
}

#[test]
fn a_file_its_grammar_cannot_parse_degrades_to_line_windows() {
    let garbage = "}}}} ((( fn fn fn ]]] <<<>>> @@@ ;;; \n".repeat(12);
    let chunks = chunk_file("src/broken.rs", Language::Rust, &garbage);
    assert!(!chunks.is_empty());
    assert!(
        chunks
            .iter()
            .all(|c| c.kind == ChunkKind::Snippet && c.method == "line-window"),
        "{chunks:?}"
    );
    // The provider keeps serving the rest of the workspace.
    let f = Fixture::new();
    f.write("src/broken.rs", &garbage);
    let p = f.open();
    assert!(!ask(&p, &q("retry_loop")).frames.is_empty());
}
