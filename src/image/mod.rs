//! What a container image's files say about the program it runs.
//!
//! The manifest alone only suggests that a container runs Go (see [`crate::runtime`]); the
//! binary in the image says it for certain, with the toolchain that built it, the modules it
//! links (`go.uber.org/automaxprocs`, `github.com/KimMachineGun/automemlimit`, which set
//! GOMAXPROCS and GOMEMLIMIT themselves) and the default GODEBUG its go.mod's go line chose.
//! [`buildinfo`] reads that from an executable's bytes, as `go version -m` prints it.

pub mod buildinfo;
