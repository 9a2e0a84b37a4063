// What proving an answer needs from the verified-height cursor (phase 2 of verified reads,
// docs/verified-reads.md): the app hashes of headers the light client has verified. The
// state after block V is committed by header V + 1, so a proof read at height V verifies
// against header V + 1's app_hash (the SDK's ABCI query and ibc-go's "proof height = query
// height + 1"); until that header is verified there is nothing to verify against.

/** The app hashes of verified headers, by the state they commit to. */
export interface VerifiedAppHashes {
  /** The app hash of the state after block `height` (header height + 1's app_hash) once that header is verified; undefined before. */
  appHashAfter (height: number): Uint8Array | undefined
}

/** A replica that follows no headers (EDGE_API_VERIFICATION off, or before its first verified header): every proven read is not-yet. */
export const NO_VERIFIED_HASHES: VerifiedAppHashes = { appHashAfter: () => undefined }
