//! The build's native step. Trunk's post-build hook (`tools/post-build.mjs`) runs
//! `cargo run -p trainer-site` and reads the JSON it prints:
//!
//! - `pages`: every route of the app ([`Route::all`], fed by the lists the app reads), each
//!   with its path, its document title and its first paint (`boot`): the header, the page's
//!   heading and introduction, and the footer, as the app draws them, rendered from the same
//!   content files. The hook writes each as `<path>/index.html`, so a static host answers
//!   every deep link with 200 and the first paint is the page, not a loading note;
//! - `unknown`: the first paint of `404.html`, for any address that is not a page;
//! - `notice`: the `<template>` the service worker's registration shows when a new version
//!   is ready (`tools/sw-register.js`).
//!
//! Nothing here touches a browser; the prose is all in `content/`.

mod html;

use std::process::ExitCode;

fn main() -> ExitCode {
    match html::Site::load().map(|s| s.json()) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("trainer-site: {e}");
            ExitCode::FAILURE
        }
    }
}
