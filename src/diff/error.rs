//! The diff domain's one error type.

use gix::ObjectId;

/// Errors while computing a diff, each naming the object or setting involved.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An object could not be read from the object database.
    #[error("cannot read {what} {id}: {}", crate::util::chain::error_chain(source))]
    ReadObject {
        what: &'static str,
        id: ObjectId,
        #[source]
        source: gix::Error,
    },
    /// The id given as a side of the diff is neither a tree nor a commit.
    #[error("{id} is not a tree or a commit")]
    NotATree { id: ObjectId },
    /// `.gitattributes` could not be loaded.
    #[error("cannot load attributes: {}", crate::util::chain::error_chain(source))]
    Attributes {
        #[source]
        source: gix::Error,
    },
    /// A `diff.*`/`core.*` setting that shapes the diff does not parse.
    #[error("invalid value for {key}: '{value}'")]
    Config { key: &'static str, value: String },
}
