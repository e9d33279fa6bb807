/**
 * Before every test file (vitest.config.ts `setupFiles`): the users the tests make get real
 * argon2id hashes at a cost of one MiB and one pass. What is proven of passwords (hashed, never
 * stored as typed, verified, unknown users taking a verification's time) holds at any cost; the
 * default cost (64 MiB, 3 passes, 4 lanes) is what `npm start` and production use.
 */
import { setPasswordHashCost } from '../src/passwords.ts'

setPasswordHashCost({ memoryCost: 1024, timeCost: 1, parallelism: 1 })
