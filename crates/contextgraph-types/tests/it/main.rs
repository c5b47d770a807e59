//! The integration tests of `contextgraph-types`, in one test binary (one
//! link on CI instead of one per file); one module per behaviour.

mod requirements_doc;
mod validation_anchors;
mod wire_omissions;
