import CLua
import CLuaShim

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

extension LuaState {
  /// Creates the metatable for `luaClass` (once per name per state).
  public func register<Object: AnyObject>(_ luaClass: LuaClass<Object>) {
    guard luaL_newmetatable(L, luaClass.name) != 0 else {
      pop()
      return
    }
    let name = luaClass.name
    let table = lua_gettop(L)

    push(function: { call in
      let slot = lua_touserdata(call.L, 1)!.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
      if let object = slot.pointee {
        slot.pointee = nil
        Unmanaged<Object>.fromOpaque(object).release()
      }
      return .none
    })
    lua_setfield(L, table, "__gc")

    // The registry keeps the metatable for the state's life, so its
    // address stays its identity: the functions below check `self` by
    // comparing addresses, with no lookup by name.
    let metatable = lua_topointer(L, table)!
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
  }

  /// Pushes `object` as userdata of `luaClass` (registered first if needed);
  /// the userdata keeps the object alive until Lua collects it. Pushing the
  /// same object again gives the same userdata while Lua holds it, so `==`
  /// and table keys work on handles.
  public func push<Object: AnyObject>(_ object: Object, as luaClass: LuaClass<Object>) {
    let key = Unmanaged.passUnretained(object).toOpaque()
    pushObjectCache()
    lua_pushlightuserdata(L, key)
    if lua_rawget(L, -2) == LUA_TUSERDATA {
      lunar_remove(L, -2)
      return
    }
    pop()
    let slot = lunar_newuserdata(L, MemoryLayout<UnsafeMutableRawPointer?>.size)!
    slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee = Unmanaged.passRetained(object).toOpaque()
    if lunar_getmetatable(L, luaClass.name) == LUA_TNIL {
      pop()
      register(luaClass)
      _ = lunar_getmetatable(L, luaClass.name)
    }
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

extension LuaCall {
  /// Argument `n` as the Swift object inside userdata of the class `name`;
  /// a type error (`name expected, got X`) otherwise.
  public func object<Object: AnyObject>(_ n: Int32, of type: Object.Type, named name: String)
    throws(LuaArgumentError) -> Object
  {
    try object(in: luaL_testudata(L, n, name), n, named: name)
  }

  /// Argument `n` as an object of `luaClass`.
  public func object<Object: AnyObject>(_ n: Int32, of luaClass: LuaClass<Object>) throws(LuaArgumentError) -> Object {
    try object(n, of: Object.self, named: luaClass.name)
  }

  /// Argument `n` as an object whose metatable is at address `metatable`
  /// (see `LuaState.register`).
  func object<Object: AnyObject>(_ n: Int32, of type: Object.Type, metatable: UnsafeRawPointer, named name: String)
    throws(LuaArgumentError) -> Object
  {
    var raw = lua_touserdata(L, n)
    if raw != nil {
      if lua_getmetatable(L, n) == 0 {
        raw = nil
      } else {
        if lua_topointer(L, -1) != metatable { raw = nil }
        lua_settop(L, -2)
      }
    }
    return try object(in: raw, n, named: name)
  }

  private func object<Object: AnyObject>(in raw: UnsafeMutableRawPointer?, _ n: Int32, named name: String)
    throws(LuaArgumentError) -> Object
  {
    guard let raw else { throw .type(n, expected: name) }
    guard let object = raw.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee else {
      throw .invalid(n, "\(name) already released")
    }
    return Unmanaged<Object>.fromOpaque(object).takeUnretainedValue()
  }
}
