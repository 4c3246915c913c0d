//! Files git pair puts in users' places: the git hook shims in the hooks directory git uses
//! (`hooks`) and the `pair-loop` skill folders the agents read (`skill`). Each write keeps what
//! the user had and can be put back.

mod file;
pub mod hooks;
pub mod skill;
