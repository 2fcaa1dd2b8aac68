// Plain words for what went wrong: the API's answers (FormKiQ's
// `{"message"}` and `{"errors":[{key, error}]}`, status codes) become a
// sentence in the user's language that says what happened and what to
// do. The API's own text is never shown; it goes to the browser's
// console for whoever debugs (an administrator's developer tools).
import { ApiError } from "./api.js";
import { t } from "../i18n/index.js";

// Known API messages, most specific first: [pattern, i18n key]. The
// patterns match the server's wording (API.md), not its translation.
const known = [
  [/Incorrect username or password/i, "err.badPassword"],
  [/User is disabled/i, "err.userDisabled"],
  [/Password attempts exceeded/i, "err.tooManyAttempts"],
  [/Invalid verification code/i, "err.badCode"],
  [/password reset by mail is not available/i, "err.noResetMail"],
  [/Password does not conform|Password not long enough/i, "err.passwordRules"],
  [/Invalid session|session.*expired/i, "err.challengeExpired"],
  [/Invalid Refresh Token/i, "err.sessionEnded"],
  [/folder is not empty/i, "err.folderNotEmpty"],
  [/cannot move a folder into itself/i, "err.moveIntoItself"],
  [/folder is already in target/i, "err.alreadyThere"],
  [/Max Number of Documents reached/i, "err.maxDocuments"],
  [/insufficient storage|storage failed/i, "err.diskFull"],
  [/legal hold/i, "err.legalHold"],
  [/checked out/i, "err.checkedOut"],
  [/retention/i, "err.retention"],
  [/approval group/i, "err.notReviewer"],
  [/temporaryPassword/i, "err.needTempPassword"],
  [/intake folder root|folder_root/i, "err.noFolderRoot"],
  [/is a reserved attribute name/i, "err.reservedName"],
  [/attribute '.*' not found/i, "err.attributeMissing"],
  [/already exists|exists already/i, "err.exists"],
  [/access denied|Unauthorized|not allowed|Admins group required/i, "err.denied"],
  [/Request body too large|cannot exceed|too large|too long/i, "err.tooLarge"],
  [/Too Many Requests|rate limit/i, "err.tooMany"],
];

const byStatus = {
  0: "err.network",
  400: "err.invalid",
  401: "err.denied",
  403: "err.denied",
  404: "err.notFound",
  409: "err.conflict",
  413: "err.tooLarge",
  429: "err.tooMany",
  502: "err.upstream",
  503: "err.unavailable",
  507: "err.diskFull",
};

// apiText is the API's own text of an error (for the log, never shown).
export function apiText(e) {
  if (e instanceof ApiError) return "HTTP " + e.status + ": " + e.message;
  return String(e && e.message ? e.message : e);
}

// explainKey is the i18n key of the plain sentence for an error.
export function explainKey(e) {
  if (e && e.plain) return e.plain; // an error the console made itself
  if (!(e instanceof ApiError)) {
    // fetch rejects with a TypeError when the server cannot be reached.
    return e instanceof TypeError ? "err.network" : "err.unexpected";
  }
  const text = e.message || "";
  for (const [re, key] of known) if (re.test(text)) return key;
  if (byStatus[e.status]) return byStatus[e.status];
  return e.status >= 500 ? "err.server" : "err.unexpected";
}

// explain is the plain sentence of an error, in the user's language.
export function explain(e) {
  if (e && e.plainText) return e.plainText;
  const key = explainKey(e);
  if (key !== "err.network") console.warn("quire:", apiText(e)); // eslint-disable-line no-console
  return t(key);
}

// PlainError is an error the console raises with its own words (a
// mismatch of two passwords, a file too large).
export class PlainError extends Error {
  constructor(text) { super(text); this.plainText = text; }
}
