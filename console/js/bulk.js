// Work on many documents at once (empty the trash, tag, move, trash a
// selection): one API request per document, a few at a time, or one per
// batch of documents where the API takes many (runBatches), with a
// progress bar and, at the end, what was done and what failed and why,
// in plain words. A failure never stops the others.
import { h, clear } from "./dom.js";
import { errorText } from "./ctx.js";
import { t } from "../i18n/index.js";

const PARALLEL = 4;

// progressPanel is the region that shows a bulk job: a bar, a line of
// text (read by screen readers), and the failures at the end.
export function progressPanel(id) {
  const bar = h("progress", { max: 1, value: 0, "aria-labelledby": id + "-text" });
  const text = h("p.bulk-text", { id: id + "-text", role: "status" });
  const failures = h("ul.bulk-failures");
  const el = h("section.bulk", { id, hidden: true, "aria-label": t("bulk.progress") }, bar, text, failures);
  return {
    el,
    start(label, total) {
      el.hidden = false;
      clear(failures);
      bar.value = 0;
      bar.max = Math.max(1, total);
      text.textContent = t("bulk.running", { what: label, done: 0, n: total });
      this.label = label;
    },
    progress(done, total) {
      bar.value = done;
      text.textContent = t("bulk.running", { what: this.label, done, n: total });
    },
    // finish says what was done, and lists each failure with its reason.
    // notes are what else the person should know (a document renamed
    // because its name was taken where it went).
    finish(total, failed, doneText, notes) {
      bar.value = bar.max;
      const ok = total - failed.length;
      text.textContent = failed.length ? t("bulk.someFailed", { ok, n: failed.length }) : doneText || t("bulk.allDone", { n: ok });
      clear(failures, failed.map((f) => h("li", h("strong", f.name), ": ", errorText(f.error))),
        (notes || []).map((n) => h("li.note", n)));
    },
    hide() { el.hidden = true; },
  };
}

// runBulk runs work(item) for every item, PARALLEL at a time, and
// returns the failures as [{item, name, error}]; name(item) names an
// item in the summary.
export async function runBulk(panel, label, items, work, name) {
  const failed = [];
  let done = 0;
  panel.start(label, items.length);
  const queue = items.slice();
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, async () => {
    while (queue.length) {
      const it = queue.shift();
      try { await work(it); } catch (e) { failed.push({ item: it, name: name(it), error: e }); }
      done++;
      panel.progress(done, items.length);
    }
  }));
  return failed;
}

// runBatches is runBulk for an API that takes many documents in one
// request (POST /documents/tags/batch): work(batch) gets up to size items
// and answers the ones it could not do as [{item, error}]; a request that
// fails fails every item of its batch. PARALLEL batches at a time.
export async function runBatches(panel, label, items, size, work, name) {
  const failed = [];
  let done = 0;
  panel.start(label, items.length);
  const queue = [];
  for (let i = 0; i < items.length; i += size) queue.push(items.slice(i, i + size));
  await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, async () => {
    while (queue.length) {
      const batch = queue.shift();
      try {
        for (const f of (await work(batch)) || []) failed.push({ item: f.item, name: name(f.item), error: f.error });
      } catch (e) {
        for (const it of batch) failed.push({ item: it, name: name(it), error: e });
      }
      done += batch.length;
      panel.progress(done, items.length);
    }
  }));
  return failed;
}
