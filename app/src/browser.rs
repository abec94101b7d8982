//! The app's browser chores, written once: the clocks, a fresh random seed, offering text as a
//! file download, and reading the file a learner picked. Pages and state call these and never
//! `Blob`, `Url`, `File` or `Date` themselves.

use wasm_bindgen::JsCast;

/// How long a download's object URL lives after its click, ms: the click starts the download,
/// and the URL is released once it has (releasing it at once can cancel it in some browsers).
const RELEASE_AFTER_MS: u32 = 1_000;

/// The browser's monotonic clock, ms (for measuring: slices, frames, the countdown).
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

/// The wall clock, ms since the Unix epoch (for dates: today's day number).
pub fn wall_ms() -> f64 {
    js_sys::Date::now()
}

/// A fresh random 64-bit seed (a new drill).
pub fn random_seed() -> u64 {
    let a = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    let b = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    (a << 32) ^ b ^ wall_ms() as u64
}

/// Offers `text` as a file called `name` of type `mime`, through a temporary link whose URL
/// is released [`RELEASE_AFTER_MS`] after the click. An error says the browser refused.
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), String> {
    offer(name, mime, text).map_err(|_| "This browser refused to save the file.".to_string())
}

fn offer(name: &str, mime: &str, text: &str) -> Result<(), wasm_bindgen::JsValue> {
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or(wasm_bindgen::JsValue::NULL)?;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let a: web_sys::HtmlAnchorElement = doc.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    // The download has started once the click returns; the URL is released a moment later.
    gloo_timers::callback::Timeout::new(RELEASE_AFTER_MS, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
    Ok(())
}

/// Reads the file picked in the `<input type="file">` that fired `ev` as text and hands it to
/// `done` (or why it could not be read). The input is cleared, so picking the same file again
/// fires again. Nothing happens when no file was picked.
pub fn read_picked_file(
    ev: &leptos::ev::Event,
    done: impl FnOnce(Result<String, String>) + 'static,
) {
    let Some(input) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
    else {
        return;
    };
    let Some(file) = input.files().and_then(|f| f.get(0)) else {
        return;
    };
    let promise = file.text();
    input.set_value("");
    leptos::task::spawn_local(async move {
        let text = wasm_bindgen_futures::JsFuture::from(promise)
            .await
            .ok()
            .and_then(|v| v.as_string());
        done(text.ok_or_else(|| "The file could not be read.".to_string()));
    });
}
