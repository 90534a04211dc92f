/**
 * Looks a key up in a map whose keys come from users (task input, config, a
 * site pack, a vendor page). Only the map's own entries count: a plain object
 * also "has" `constructor`, `toString` or `__proto__` through its prototype,
 * which would otherwise turn an unknown name into a function and a stack trace.
 */
export function own<V>(map: Readonly<Record<string, V>> | undefined, key: string): V | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}
