// Attributes as the console edits them (the document page, bulk work):
// the site's definitions with their allowed values and those values'
// labels in the console's language, the control of each data type, and
// the API body a control's value makes.
import { h } from "./dom.js";
import { api } from "./api.js";
import { siteQuery } from "./ctx.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;

// definitions loads the site's attributes: {list, types: key->dataType,
// allowed: key->[values], labels: key->{value: label}}. Allowed values
// come from the site schema or a classification; their labels from the
// site's locale in the console's language (API.md "Sites and locales"),
// the value itself where none is given.
export async function definitions() {
  const q = siteQuery();
  const defs = await api("GET", "/attributes", { query: { ...q, limit: 100 } });
  const list = defs.attributes || [];
  const types = Object.fromEntries(list.map((d) => [d.key, d.dataType]));
  const allowed = {}, labels = {};
  await Promise.all(list.filter((d) => d.dataType === "STRING").map(async (d) => {
    try {
      const out = await api("GET", `/attributes/${enc(d.key)}/allowedValues`, { query: q });
      allowed[d.key] = out.allowedValues || [];
    } catch (_) { allowed[d.key] = []; }
    if (!allowed[d.key].length) return;
    const loc = await api("GET", `/sites/${enc(q.siteId)}/schema/document/attributes/${enc(d.key)}/allowedValues`, { query: { locale: lang() } }).catch(() => ({}));
    labels[d.key] = loc.localizedAllowedValues || {};
  }));
  return { list, types, allowed, labels };
}

// input builds the control of a data type: date picker, number,
// checkbox, a select of allowed values, or text; null for a marker
// (KEY_ONLY), which has no value.
export function input(id, dataType, allowed, value, labels) {
  switch (dataType) {
    case "DATE": return h("input", { id, type: "date", value: value ? String(value).slice(0, 10) : "" });
    case "NUMBER": return h("input", { id, type: "number", step: "any", value: value ?? "" });
    case "BOOLEAN": return h("input", { id, type: "checkbox", checked: !!value });
    case "KEY_ONLY": return null;
  }
  if (allowed && allowed.length) {
    return h("select", { id }, allowed.map((v) => h("option", { value: v, selected: v === value }, (labels && labels[v]) || v)));
  }
  return h("input", { id, type: "text", value: value ?? "" });
}

// body is the `attribute` of a PUT /documents/{id}/attributes/{key}.
export function body(dataType, el) {
  switch (dataType) {
    case "DATE": return { stringValue: el.value };
    case "NUMBER": return { numberValue: Number(el.value) };
    case "BOOLEAN": return { booleanValue: el.checked };
    case "KEY_ONLY": return {};
  }
  return { stringValue: el.value };
}

// typeName is a data type in words.
export function typeName(dataType) {
  return t("type." + (dataType || "STRING"));
}
