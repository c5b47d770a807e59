//! A small MCP server serving a folder's files as resources, over stdio: the
//! peer `cgp bridge mcp` and `contextgraph-mcp`'s bridge are tested
//! against. One program for every crate whose tests spawn it: each gives it
//! a `[[bin]]` (or example) whose `main` calls [`main`].
//!
//! Every regular file directly in the folder is one resource (`file://`
//! URI, MIME type by extension), read afresh on every `resources/read` so
//! edits show up in `verify`; `memo://fixture/about` is one more resource
//! that lives only in the server. Flags for tests of failure handling:
//! `--exit-on-read` exits the process on the first read (a crash);
//! `--hang-on-read` never answers a read (a hung server);
//! `--page-size N` paginates the listing.

use std::path::{Path, PathBuf};

use rmcp::model::{
    ErrorCode, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

const ABOUT_URI: &str = "memo://fixture/about";
const ABOUT_TEXT: &str =
    "This fixture server exposes a folder as MCP resources for the bridge tests.\n";

struct Fixture {
    dir: PathBuf,
    exit_on_read: bool,
    hang_on_read: bool,
    page_size: usize,
}

fn mime_for(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("md") => "text/markdown",
        Some("rs") => "text/x-rust",
        Some("py") => "text/x-python",
        Some("json") => "application/json",
        Some("png") => "image/png",
        _ => "text/plain",
    }
}

impl Fixture {
    fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_file())
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    fn resources(&self) -> Vec<Resource> {
        let mut out: Vec<Resource> = self
            .files()
            .into_iter()
            .filter_map(|p| {
                let uri = contextgraph_provider_sdk::path_to_file_uri(&p).ok()?;
                let name = p.file_name()?.to_string_lossy().into_owned();
                Some(Resource::new(uri, name).with_mime_type(mime_for(&p)))
            })
            .collect();
        out.push(
            Resource::new(ABOUT_URI, "about")
                .with_title("About the fixture")
                .with_mime_type("text/plain"),
        );
        out
    }
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_resources().build())
            .with_server_info(Implementation::new("fixture-notes", "0.3.1"))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let all = self.resources();
        let start: usize = request
            .and_then(|r| r.cursor)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let end = (start + self.page_size).min(all.len());
        let mut page = ListResourcesResult::with_all_items(all[start.min(end)..end].to_vec());
        if end < all.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if self.exit_on_read {
            std::process::exit(3);
        }
        if self.hang_on_read {
            std::future::pending::<()>().await;
        }
        let uri = request.uri;
        if uri == ABOUT_URI {
            return Ok(
                ReadResourceResult::new(vec![ResourceContents::text(ABOUT_TEXT, uri)]).into(),
            );
        }
        let not_found = || ErrorData::new(ErrorCode::RESOURCE_NOT_FOUND, "no such resource", None);
        let path = contextgraph_provider_sdk::file_uri_to_path(&uri).map_err(|_| not_found())?;
        if path.parent() != Some(self.dir.as_path()) {
            return Err(not_found());
        }
        let bytes = std::fs::read(&path).map_err(|_| not_found())?;
        let mime = mime_for(&path);
        let contents = match String::from_utf8(bytes) {
            Ok(text) => ResourceContents::text(text, uri).with_mime_type(mime),
            Err(_) => ResourceContents::blob("AAAA", uri).with_mime_type(mime),
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

async fn serve_from_args() {
    let mut dir = None;
    let mut exit_on_read = false;
    let mut hang_on_read = false;
    let mut page_size = 1000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--exit-on-read" => exit_on_read = true,
            "--hang-on-read" => hang_on_read = true,
            "--page-size" => page_size = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000),
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    let Some(dir) = dir.and_then(|d| std::fs::canonicalize(d).ok()) else {
        eprintln!("usage: mcp_fixture_server <existing dir> [--exit-on-read] [--hang-on-read] [--page-size N]");
        std::process::exit(2);
    };
    let fixture = Fixture {
        dir,
        exit_on_read,
        hang_on_read,
        page_size: page_size.max(1),
    };
    match fixture.serve(rmcp::transport::stdio()).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => {
            eprintln!("mcp_fixture_server: {e}");
            std::process::exit(1);
        }
    }
}

/// Run the fixture server on this process's arguments (`<dir>
/// [--exit-on-read] [--hang-on-read] [--page-size N]`) and standard streams
/// until the client disconnects. Exits 2 on a usage error, 1 when the MCP
/// session cannot start, 3 on a read under `--exit-on-read`.
pub fn main() {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp_fixture_server: no runtime: {e}");
            std::process::exit(1);
        }
    };
    runtime.block_on(serve_from_args());
}
