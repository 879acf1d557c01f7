extension Fingerprint {
  /// The SHA-256 of `content` itself (a workflow file's bytes), as
  /// `sha256sum` prints it.
  public init(ofContent content: [UInt8]) {
    bytes = SHA256.hash(content)
  }
}
