import CLua
import CLuaShim
import Synchronization

/// How a Swift class appears in Lua as userdata: one metatable per type,
/// with `__name`, methods reached through `__index`, `__tostring`, and a
/// `__gc` that releases the Swift object.
public struct LuaClass<Object: AnyObject> {
  /// A method: receives the object (argument 1, checked) and the call.
  public typealias Method = (Object, LuaCall) throws -> LuaReturn

  /// The metatable's `__name`, shown in messages (`Queue expected, got nil`).
  public let name: String
  /// Methods by name, reached as `object:name(...)`.
  public var methods: [String: Method] = [:]
  /// Field getters, reached as `object.name` (checked after methods).
  public var properties: [String: Method] = [:]
  /// What `tostring(object)` shows; by default `name: 0x...`.
  public var describe: ((Object) -> String)?

  /// A class named `name` with no methods yet.
  public init(name: String) {
    self.name = name
  }

  /// Adds a method.
  public mutating func method(_ name: String, _ body: @escaping Method) {
    methods[name] = body
  }

  /// Adds a read-only property.
  public mutating func property(_ name: String, _ body: @escaping Method) {
    properties[name] = body
  }
}

/// The memory block of every userdata `push(_:as:)` makes. Lua code cannot
/// write it, not even through `debug`, so its tags, not the userdata's
/// (replaceable) metatable, say what the object is.
struct LuaObjectBlock {
  /// The retained object; nil once `__gc` has released it.
  var object: UnsafeMutableRawPointer?
  /// The object's Swift class: methods cast the pointer back only to it.
  let type: ObjectIdentifier
  /// The metatable of the `LuaClass` it was pushed as (its identity in the
  /// state), so two classes of one Swift type still refuse each other.
  let metatable: UnsafeRawPointer

  /// The block of the userdata at `index` on `L`, if it is one: full
  /// userdata of exactly this size (a light or foreign userdata is not).
  @inline(__always)
  static func at(_ index: Int32, on L: OpaquePointer) -> UnsafeMutablePointer<LuaObjectBlock>? {
    guard let raw = lua_touserdata(L, index), lua_rawlen(L, index) == MemoryLayout<LuaObjectBlock>.size else {
      return nil
    }
    return raw.assumingMemoryBound(to: LuaObjectBlock.self)
  }

  /// Every Swift class ever pushed: `__gc` releases a block of another class
  /// (its metatable swapped through `debug`) only if its type is one of these.
  static let knownTypes = Mutex<Set<ObjectIdentifier>>([])

  /// The registry table naming each class by its metatable's address, for
  /// messages about userdata whose metatable was swapped.
  static let classNames = "lunar.classes"

  /// The registry table listing each class's property names (sorted) by the
  /// class's name: properties are found by a Swift closure, so nothing else
  /// lets a tool (the editor types' drift test) list an object's fields.
  static let propertyNames = "lunar.properties"
}

extension LuaStack {
  /// Creates the metatable for `luaClass` (once per name per state).
  public func register<Object: AnyObject>(_ luaClass: LuaClass<Object>) {
    LuaThread(L).registerClass(luaClass)
  }

  /// Pushes `object` as userdata of `luaClass` (registered first if needed);
  /// the userdata keeps the object alive until Lua collects it. Pushing the
  /// same object again gives the same userdata while Lua holds it, so `==`
  /// and table keys work on handles.
  public func push<Object: AnyObject>(_ object: Object, as luaClass: LuaClass<Object>) {
    LuaThread(L).pushObject(object, as: luaClass)
  }
}

// On the concrete thread, not generically for every stack: the methods'
// closures are called on every method call from Lua, and would otherwise
// carry (and reabstract through) the stack's generic context.
extension LuaThread {
  fileprivate func registerClass<Object: AnyObject>(_ luaClass: LuaClass<Object>) {
    guard luaL_newmetatable(L, luaClass.name) != 0 else {
      pop()
      return
    }
    let name = luaClass.name
    let table = lua_gettop(L)
    let type = ObjectIdentifier(Object.self)
    _ = LuaObjectBlock.knownTypes.withLock { $0.insert(type) }

    push(function: { call in
      // Releasing needs no static type, so a block of another known class
      // (its metatable swapped with `debug`) is released as well.
      if let block = LuaObjectBlock.at(1, on: call.L), let object = block.pointee.object,
        block.pointee.type == type || LuaObjectBlock.knownTypes.withLock({ $0.contains(block.pointee.type) })
      {
        block.pointee.object = nil
        Unmanaged<AnyObject>.fromOpaque(object).release()
      }
      return .none
    })
    lua_setfield(L, table, "__gc")

    // The registry keeps the metatable for the state's life, so its
    // address stays its identity: every object pushed as this class carries
    // it in its block, and the functions below compare the two.
    let metatable = lua_topointer(L, table)!
    lua_getfield(L, lunar_registryindex(), LuaObjectBlock.classNames)
    if lua_type(L, -1) != LUA_TTABLE {
      pop()
      lua_createtable(L, 0, 4)
      lua_pushvalue(L, -1)
      lua_setfield(L, lunar_registryindex(), LuaObjectBlock.classNames)
    }
    lua_pushlightuserdata(L, UnsafeMutableRawPointer(mutating: metatable))
    push(name)
    lua_rawset(L, -3)
    pop()
    registerPropertyNames(luaClass.properties.keys.sorted(), of: name)

    func pushChecked(_ body: @escaping LuaClass<Object>.Method) {
      push(function: { call in try body(try call.object(1, of: Object.self, metatable: metatable, named: name), call) })
    }
    let describe = luaClass.describe
    pushChecked { object, call in
      call.push(describe?(object) ?? "\(name): \(String(describing: Unmanaged.passUnretained(object).toOpaque()))")
      return .one
    }
    lua_setfield(L, table, "__tostring")

    // __index: methods first, then properties, then nil.
    lua_createtable(L, 0, Int32(luaClass.methods.count))
    for (methodName, body) in luaClass.methods {
      pushChecked(body)
      lua_setfield(L, -2, methodName)
    }
    let properties = luaClass.properties
    if properties.isEmpty {
      lua_setfield(L, table, "__index")
    } else {
      // Methods are found in C, so only a property read calls into Swift.
      pushChecked { object, call in
        if lua_type(call.L, 2) == LUA_TSTRING, let key = try? call.string(2), let getter = properties[key] {
          return try getter(object, call)
        }
        call.pushNil()
        return .one
      }
      lunar_insert(L, -2)  // the getter, then the methods table
      lunar_pushclassindex(L)
      lua_setfield(L, table, "__index")
    }
    pop()
    // Made with the first class, not the first object: a state reused for
    // script after script (LuaState.takeSnapshot) keeps the registry's
    // entries as they were when it was set up.
    pushObjectCache()
    pop()
  }

  /// Records `names` as the properties of class `name` in the registry's
  /// `lunar.properties` table.
  private func registerPropertyNames(_ names: [String], of name: String) {
    if lua_getfield(L, lunar_registryindex(), LuaObjectBlock.propertyNames) != LUA_TTABLE {
      pop()
      lua_createtable(L, 0, 4)
      lua_pushvalue(L, -1)
      lua_setfield(L, lunar_registryindex(), LuaObjectBlock.propertyNames)
    }
    lua_createtable(L, Int32(names.count), 0)
    for (position, property) in names.enumerated() {
      push(property)
      lua_rawseti(L, -2, lua_Integer(position + 1))
    }
    push(name)
    lunar_insert(L, -2)
    lua_rawset(L, -3)
    pop()
  }

  fileprivate func pushObject<Object: AnyObject>(_ object: Object, as luaClass: LuaClass<Object>) {
    let key = Unmanaged.passUnretained(object).toOpaque()
    pushObjectCache()
    lua_pushlightuserdata(L, key)
    // The cached userdata must still hold this object: one whose object a
    // `__gc` called by hand released stays cached under the address, which
    // a new object may since have been given.
    if lua_rawget(L, -2) == LUA_TUSERDATA, LuaObjectBlock.at(-1, on: L)?.pointee.object == key {
      lunar_remove(L, -2)
      return
    }
    pop()
    let raw = lunar_newuserdata(L, MemoryLayout<LuaObjectBlock>.size)!
    if lunar_getmetatable(L, luaClass.name) == LUA_TNIL {
      pop()
      registerClass(luaClass)
      _ = lunar_getmetatable(L, luaClass.name)
    }
    raw.bindMemory(to: LuaObjectBlock.self, capacity: 1).initialize(
      to: LuaObjectBlock(
        object: Unmanaged.passRetained(object).toOpaque(), type: ObjectIdentifier(Object.self),
        metatable: lua_topointer(L, -1)!))
    lua_setmetatable(L, -2)
    // cache[key] = userdata; the cache is under the userdata on the stack.
    lua_pushlightuserdata(L, key)
    lua_pushvalue(L, -2)
    lua_rawset(L, -4)
    lunar_remove(L, -2)
  }


  /// Pushes the registry's table of live userdata by object, with weak
  /// values so it never keeps one alive.
  private func pushObjectCache() {
    if lua_getfield(L, lunar_registryindex(), "lunar.objects") == LUA_TTABLE { return }
    pop()
    lua_createtable(L, 0, 0)
    lua_createtable(L, 0, 1)
    push("v")
    lua_setfield(L, -2, "__mode")
    lua_setmetatable(L, -2)
    lua_pushvalue(L, -1)
    lua_setfield(L, lunar_registryindex(), "lunar.objects")
  }
}

extension LuaStack {
  /// The object inside the userdata at `index` if `LuaState.push(_:as:)`
  /// made it from an object of class `type` (as any `LuaClass` of that
  /// type) and Lua has not collected it; nil for any other value. Checked
  /// by the tag in the userdata's own memory, so a metatable swapped with
  /// `debug` cannot pass one class off as another.
  public func object<Object: AnyObject>(at index: Int32, of type: Object.Type) -> Object? {
    guard let block = LuaObjectBlock.at(index, on: L), block.pointee.type == ObjectIdentifier(type),
      let object = block.pointee.object
    else { return nil }
    return Unmanaged<Object>.fromOpaque(object).takeUnretainedValue()
  }
}

extension LuaCall {
  /// Argument `n` as the Swift object inside userdata of the class `name`;
  /// a type error (`name expected, got X`) otherwise.
  public func object<Object: AnyObject>(_ n: Int32, of type: Object.Type, named name: String)
    throws(LuaArgumentError) -> Object
  {
    let metatable = lunar_getmetatable(L, name) == LUA_TTABLE ? lua_topointer(L, -1) : nil
    lua_settop(L, -2)
    guard let metatable else { throw wrongObject(n, expected: name) }
    return try object(n, of: type, metatable: metatable, named: name)
  }

  /// Argument `n` as an object of `luaClass`.
  public func object<Object: AnyObject>(_ n: Int32, of luaClass: LuaClass<Object>) throws(LuaArgumentError) -> Object {
    try object(n, of: Object.self, named: luaClass.name)
  }

  /// Argument `n` as an object pushed as the class whose metatable is at
  /// address `metatable` (see `LuaState.register`): both tags of its block
  /// must match, whatever its metatable is now.
  @inline(__always)
  func object<Object: AnyObject>(_ n: Int32, of type: Object.Type, metatable: UnsafeRawPointer, named name: String)
    throws(LuaArgumentError) -> Object
  {
    guard let block = LuaObjectBlock.at(n, on: L), block.pointee.metatable == metatable,
      block.pointee.type == ObjectIdentifier(type)
    else { throw wrongObject(n, expected: name) }
    guard let object = block.pointee.object else { throw .invalid(n, "\(name) already released") }
    return Unmanaged<Object>.fromOpaque(object).takeUnretainedValue()
  }

  /// The type error for argument `n`, naming an object by the class it was
  /// pushed as (not by a metatable it may have been given since).
  private func wrongObject(_ n: Int32, expected name: String) -> LuaArgumentError {
    guard let block = LuaObjectBlock.at(n, on: L) else { return .type(n, expected: name) }
    lua_getfield(L, lunar_registryindex(), LuaObjectBlock.classNames)
    defer { lua_settop(L, -2) }
    guard lua_type(L, -1) == LUA_TTABLE else { return .type(n, expected: name) }
    lua_pushlightuserdata(L, UnsafeMutableRawPointer(mutating: block.pointee.metatable))
    lua_rawget(L, -2)
    defer { lua_settop(L, -2) }
    var length = 0
    guard lua_type(L, -1) == LUA_TSTRING, let chars = lua_tolstring(L, -1, &length) else { return .type(n, expected: name) }
    let actual = String(decoding: UnsafeRawBufferPointer(start: chars, count: length), as: UTF8.self)
    return .invalid(n, "\(name) expected, got \(actual)")
  }
}
