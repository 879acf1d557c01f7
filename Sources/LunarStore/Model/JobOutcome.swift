/// How a job ended, as its worker reports it.
public enum JobOutcome: Sendable, Equatable {
  /// It returned `output` (LuaValueCodec bytes of the values returned).
  case succeeded(output: [UInt8])
  /// It raised `error` (the bytes of the error message, or of an encoded
  /// error value: the store keeps them exactly).
  case failed(error: [UInt8])

  /// The status the job ends in.
  public var status: JobStatus {
    switch self {
    case .succeeded: .succeeded
    case .failed: .failed
    }
  }

  /// The job's `output` and `error` columns: one of them is set.
  var columns: (output: [UInt8]?, error: [UInt8]?) {
    switch self {
    case .succeeded(let bytes): (bytes, nil)
    case .failed(let bytes): (nil, bytes)
    }
  }

  /// Throws if the bytes the job ended with pass the store's limit.
  func checkSize() throws(StoreError) {
    switch self {
    case .succeeded(let bytes): try QueueLimits.check(value: bytes, "output")
    case .failed(let bytes): try QueueLimits.check(value: bytes, "error")
    }
  }
}
