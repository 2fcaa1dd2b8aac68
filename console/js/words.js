// Words for what the API names with codes: enum values (an action's
// status, an activity's type, a user's state) and content types. A value
// the console has no string for is shown lower-case with spaces, never as
// the code itself (FORCE_CHANGE_PASSWORD would read "force change
// password").
import { t, has } from "../i18n/index.js";

// named is the string of an API enum value under an i18n prefix.
export function named(prefix, value) {
  const v = String(value ?? "");
  if (!v) return "";
  if (has(prefix + v)) return t(prefix + v);
  return v.replace(/[_-]+/g, " ").toLowerCase();
}

const kinds = [
  [/^application\/pdf$/, "kind.pdf"],
  [/^image\//, "kind.image"],
  [/^text\/csv$|spreadsheet|excel|opendocument\.spreadsheet/, "kind.spreadsheet"],
  [/presentation|powerpoint/, "kind.presentation"],
  [/wordprocessing|msword|opendocument\.text|rtf/, "kind.word"],
  [/^message\/|\.ms-outlook/, "kind.email"],
  [/zip|compressed|x-tar|gzip|x-7z/, "kind.archive"],
  [/^audio\//, "kind.audio"],
  [/^video\//, "kind.video"],
  [/^text\/|json|xml/, "kind.text"],
];

// kindOf names a content type the way a person would ("PDF document",
// "Image"), "File" for anything else.
export function kindOf(contentType) {
  const ct = String(contentType || "").toLowerCase();
  for (const [re, key] of kinds) if (re.test(ct)) return t(key);
  return t("kind.other");
}
