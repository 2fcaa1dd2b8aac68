package storage

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Every key prefix lives in this file so the whole layout can be read at a
// glance (see DESIGN.md). Site-scoped keys start with "<prefix>/<site>/".
// Parts that may contain "/" (paths, tag keys and values) come last or are
// separated by a NUL byte, which validation refuses in user input.
const (
	pfxSite        = "s/"   // s/<site> -> Site
	pfxDoc         = "d/"   // d/<site>/<doc> -> Document
	pfxTag         = "t/"   // t/<site>/<doc>/<tagKey> -> Tag
	pfxTagIndex    = "ti/"  // ti/<site>/<tagKey>\x00<value>\x00<doc> -> ""
	pfxPath        = "p/"   // p/<site>/<path> -> documentId
	pfxFolder      = "f/"   // f/<site>/<parentFolder>\x00<d|f>\x00<name> -> FolderEntry
	pfxInserted    = "ins/" // ins/<site>/<ts>/<doc> -> "" (active top-level documents)
	pfxDeleted     = "del/" // del/<site>/<ts>/<doc> -> "" (soft-deleted top-level documents)
	pfxAction      = "a/"   // a/<site>/<doc>/<seq>[.<retry>] -> Action
	pfxActionQueue = "aq/"  // aq/<site>/<doc> -> uint64 unix nanos: the document has an action to run from then
	pfxActionStat  = "as/"  // as/<site>/<status>/<doc> -> "" (documents with an action in that status)
	pfxText        = "tx/"  // tx/<site>/<doc>/<kind> -> TextRecord (extracted text: fulltext, ocr)
	pfxQueue       = "qu/"  // qu/<site>/<queueId> -> Queue
	pfxQueueDoc    = "qd/"  // qd/<site>/<queueId>/<doc> -> QueuedDocument
	pfxSiteConfig  = "cfg/" // cfg/<site> -> SiteConfig
	pfxPublication = "pub/" // pub/<site>/<doc> -> Publication
	pfxResult      = "ar/"  // ar/<site>/<doc>/<kind>/<name> -> ActionResult
	pfxChunk       = "c/"   // c/<sha256> -> codec byte + chunk bytes
	pfxChunkRefs   = "cr/"  // cr/<sha256> -> uint64 reference count
	pfxManifest    = "cm/"  // cm/<sha256> -> Manifest
	pfxAPIKey      = "k/"   // k/<sha256 of key> -> APIKey
	pfxAPIKeyBySit = "ks/"  // ks/<site>/<ts>/<sha256 of key> -> ""
	pfxDetect      = "ctq/" // ctq/<site>/<doc> -> contentSha256 whose type is still to be detected
	pfxAttrDef     = "at/"  // at/<site>/<key> -> AttributeDef
	pfxDocAttr     = "da/"  // da/<site>/<doc>/<key> -> DocAttribute
	pfxAttrIndex   = "ai/"  // ai/<site>/<key>\x00<value>\x00<doc> -> "" (numbers as EncodeNumber)
	pfxSchema      = "sc/"  // sc/<site> -> Schema
	pfxClass       = "cl/"  // cl/<site>/<classificationId> -> Classification
	pfxEntityType  = "et/"  // et/<site>/<entityTypeId> -> EntityType
	pfxEntityName  = "etn/" // etn/<site>/<namespace>/<name> -> entityTypeId
	pfxEntity      = "en/"  // en/<site>/<entityTypeId>/<entityId> -> Entity
	pfxSequence    = "sq/"  // sq/<site>/<sequenceId> -> Sequence
	pfxSeqByAttr   = "sqa/" // sqa/<site>/<attributeKey> -> sequenceId
	pfxSeqCounter  = "sqc/" // sqc/<site>/<sequenceId>/<period> -> uint64 last number
	pfxMapping     = "mp/"  // mp/<site>/<mappingId> -> Mapping
	pfxMoveJob     = "mj/"  // mj/<site>/<jobId> -> FolderMoveJob
	pfxFolderPerm  = "fp/"  // fp/<site>/<folder> -> FolderPermissions
	pfxDocCount    = "dc/"  // dc/<site> -> decimal count of document records, kept while the site has maxDocuments
	keyApplied     = "meta/applied"
)

func siteKey(site string) []byte { return []byte(pfxSite + site) }

func docKey(site, id string) []byte { return []byte(pfxDoc + site + "/" + id) }

func docPrefix(site string) []byte { return []byte(pfxDoc + site + "/") }

func tagKey(site, doc, key string) []byte { return []byte(pfxTag + site + "/" + doc + "/" + key) }

func tagPrefix(site, doc string) []byte { return []byte(pfxTag + site + "/" + doc + "/") }

func tagIndexKey(site, key, value, doc string) []byte {
	return []byte(pfxTagIndex + site + "/" + key + "\x00" + value + "\x00" + doc)
}

// tagIndexPrefix returns the prefix of all index entries of key whose value
// starts with valuePrefix; exact is true when the value must equal it.
func tagIndexPrefix(site, key, valuePrefix string, exact bool) []byte {
	k := pfxTagIndex + site + "/" + key + "\x00" + valuePrefix
	if exact {
		k += "\x00"
	}
	return []byte(k)
}

func pathKey(site, path string) []byte { return []byte(pfxPath + site + "/" + path) }

// folderKey is the key of a folder tree entry. Folders ("d") sort before
// documents ("f") within their parent, and a folder and a document may
// share a name.
func folderKey(site, parent string, folder bool, name string) []byte {
	kind := "f\x00"
	if folder {
		kind = "d\x00"
	}
	return []byte(pfxFolder + site + "/" + parent + "\x00" + kind + name)
}

func folderPrefix(site, parent string) []byte {
	return []byte(pfxFolder + site + "/" + parent + "\x00")
}

func insertedKey(site string, at time.Time, doc string) []byte {
	return []byte(pfxInserted + site + "/" + tsHex(at) + "/" + doc)
}

func insertedPrefix(site string) []byte { return []byte(pfxInserted + site + "/") }

func deletedKey(site string, at time.Time, doc string) []byte {
	return []byte(pfxDeleted + site + "/" + tsHex(at) + "/" + doc)
}

func deletedPrefix(site string) []byte { return []byte(pfxDeleted + site + "/") }

func actionKey(site, doc string, seq, retry int) []byte {
	return []byte(pfxAction + site + "/" + doc + "/" + actionID(seq, retry))
}

func actionQueueKey(site, doc string) []byte { return []byte(pfxActionQueue + site + "/" + doc) }

func actionStatusKey(site, status, doc string) []byte {
	return []byte(pfxActionStat + site + "/" + status + "/" + doc)
}

func actionStatusPrefix(site, status string) []byte {
	return []byte(pfxActionStat + site + "/" + status + "/")
}

func textKey(site, doc, kind string) []byte { return []byte(pfxText + site + "/" + doc + "/" + kind) }

func textPrefix(site, doc string) []byte { return []byte(pfxText + site + "/" + doc + "/") }

func resultKey(site, doc, kind, name string) []byte {
	return []byte(pfxResult + site + "/" + doc + "/" + kind + "/" + name)
}

// resultPrefix is the prefix of a document's results of kind (all kinds
// when kind is empty).
func resultPrefix(site, doc, kind string) []byte {
	if kind == "" {
		return []byte(pfxResult + site + "/" + doc + "/")
	}
	return []byte(pfxResult + site + "/" + doc + "/" + kind + "/")
}

func actionPrefix(site, doc string) []byte { return []byte(pfxAction + site + "/" + doc + "/") }

func chunkKey(sha string) []byte { return []byte(pfxChunk + sha) }

func chunkRefsKey(sha string) []byte { return []byte(pfxChunkRefs + sha) }

func manifestKey(sha string) []byte { return []byte(pfxManifest + sha) }

func apiKeyKey(hash string) []byte { return []byte(pfxAPIKey + hash) }

func apiKeySiteKey(site string, at time.Time, hash string) []byte {
	return []byte(pfxAPIKeyBySit + site + "/" + tsHex(at) + "/" + hash)
}

func apiKeySitePrefix(site string) []byte { return []byte(pfxAPIKeyBySit + site + "/") }

// tsHex encodes a time as 16 hex digits of Unix nanoseconds so that keys
// sort chronologically.
func tsHex(t time.Time) string { return fmt.Sprintf("%016x", uint64(t.UnixNano())) }

func encodeUint64(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

func decodeUint64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

func detectKey(site, doc string) []byte { return []byte(pfxDetect + site + "/" + doc) }

func attrDefKey(site, key string) []byte { return []byte(pfxAttrDef + site + "/" + key) }

func attrDefPrefix(site string) []byte { return []byte(pfxAttrDef + site + "/") }

func docAttrKey(site, doc, key string) []byte {
	return []byte(pfxDocAttr + site + "/" + doc + "/" + key)
}

func docAttrPrefix(site, doc string) []byte { return []byte(pfxDocAttr + site + "/" + doc + "/") }

func attrIndexKey(site, key, value, doc string) []byte {
	return []byte(pfxAttrIndex + site + "/" + key + "\x00" + value + "\x00" + doc)
}

// attrIndexPrefix covers every indexed value of key.
func attrIndexPrefix(site, key string) []byte {
	return []byte(pfxAttrIndex + site + "/" + key + "\x00")
}

// attrIndexValuePrefix covers the documents whose key has exactly value.
func attrIndexValuePrefix(site, key, value string) []byte {
	return []byte(pfxAttrIndex + site + "/" + key + "\x00" + value + "\x00")
}

func schemaKey(site string) []byte { return []byte(pfxSchema + site) }

func classificationKey(site, id string) []byte { return []byte(pfxClass + site + "/" + id) }

func classificationPrefix(site string) []byte { return []byte(pfxClass + site + "/") }

func entityTypeKey(site, id string) []byte { return []byte(pfxEntityType + site + "/" + id) }

func entityTypePrefix(site string) []byte { return []byte(pfxEntityType + site + "/") }

func entityTypeNameKey(site, namespace, name string) []byte {
	return []byte(pfxEntityName + site + "/" + namespace + "/" + name)
}

func entityKey(site, typeID, id string) []byte {
	return []byte(pfxEntity + site + "/" + typeID + "/" + id)
}

func entityPrefix(site, typeID string) []byte { return []byte(pfxEntity + site + "/" + typeID + "/") }

func sequenceKey(site, id string) []byte { return []byte(pfxSequence + site + "/" + id) }

func sequencePrefix(site string) []byte { return []byte(pfxSequence + site + "/") }

func sequenceByAttrKey(site, key string) []byte { return []byte(pfxSeqByAttr + site + "/" + key) }

func sequenceCounterKey(site, id, period string) []byte {
	return []byte(pfxSeqCounter + site + "/" + id + "/" + period)
}

func sequenceCounterPrefix(site, id string) []byte {
	return []byte(pfxSeqCounter + site + "/" + id + "/")
}

func mappingKey(site, id string) []byte { return []byte(pfxMapping + site + "/" + id) }

func mappingPrefix(site string) []byte { return []byte(pfxMapping + site + "/") }

func queueKey(site, id string) []byte { return []byte(pfxQueue + site + "/" + id) }

func queuePrefix(site string) []byte { return []byte(pfxQueue + site + "/") }

func queueDocKey(site, queue, doc string) []byte {
	return []byte(pfxQueueDoc + site + "/" + queue + "/" + doc)
}

func queueDocPrefix(site, queue string) []byte { return []byte(pfxQueueDoc + site + "/" + queue + "/") }

func siteConfigKey(site string) []byte { return []byte(pfxSiteConfig + site) }

func docCountKey(site string) []byte { return []byte(pfxDocCount + site) }

// systemConfigKey holds the system configuration (one record).
var systemConfigKey = []byte("sysconfig")

func publicationKey(site, doc string) []byte { return []byte(pfxPublication + site + "/" + doc) }
