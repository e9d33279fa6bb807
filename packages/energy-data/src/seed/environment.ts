/**
 * A deterministic model of the campus surroundings, quarter hour by quarter hour: Turin's sun,
 * clouds, temperature, wind and rain, the local calendar and how busy the buildings are.
 * Pure functions of (seed, time): the same seed always gives the same estate.
 */
import { DAY_MS, HOUR_MS, offsetMinutes, QUARTER_MS } from '../domain/time.ts'

/** Where the estate stands: Turin, in Europe/Rome's local time. */
const ESTATE_ZONE = 'Europe/Rome'
const LATITUDE = (45.06 * Math.PI) / 180
const LONGITUDE_DEG = 7.66

/** Uniform in [0, 1) from three integers (a stateless hash, so any quarter can be computed alone). */
export function noise(seed: number, stream: number, i: number): number {
  let h = (seed ^ Math.imul(stream + 1, 0x9e3779b1) ^ Math.imul(i, 0x85ebca6b)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d)
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b)
  h ^= h >>> 16
  return (h >>> 0) / 4_294_967_296
}

/** Noise that moves smoothly with x (value noise with a smoothstep between integer points). */
function smooth(seed: number, stream: number, x: number): number {
  const i = Math.floor(x)
  const f = x - i
  const s = f * f * (3 - 2 * f)
  return noise(seed, stream, i) * (1 - s) + noise(seed, stream, i + 1) * s
}

const HOLIDAYS = new Set([
  '01-01',
  '01-06',
  '04-25',
  '05-01',
  '06-02',
  '06-24',
  '08-15',
  '11-01',
  '12-08',
  '12-25',
  '12-26',
])

export interface Environment {
  /** Local hour of day, fractional. */
  hour: number
  /** 0 Sunday ... 6 Saturday, local. */
  weekday: number
  dayOfYear: number
  /** 0 (empty) to 1 (a full teaching day). */
  occupancy: number
  /** Sine of the sun's elevation; <= 0 at night. */
  sunHeight: number
  /** Clear-sky fraction reaching the ground, 0.1 (overcast) to 1. */
  clearness: number
  /** Global horizontal irradiance, W/m2. */
  ghi: number
  diffuse: number
  temperature: number
  humidity: number
  pressure: number
  rain: number
  windSpeed: number
  windDirection: number
}

function occupancyOf(hour: number, weekday: number, closed: boolean, reduced: boolean): number {
  if (closed) return 0.04
  const day =
    hour < 7 || hour >= 21
      ? 0
      : hour < 9
        ? (hour - 7) / 2
        : hour < 13
          ? 1
          : hour < 14
            ? 0.75
            : hour < 18
              ? 0.95
              : (21 - hour) / 3.2
  const week = weekday === 0 ? 0.05 : weekday === 6 ? 0.25 : 1
  return Math.max(0.03, day * week * (reduced ? 0.35 : 1))
}

export function environmentAt(seed: number, ms: number): Environment {
  const local = new Date(ms + offsetMinutes(ms, ESTATE_ZONE) * 60_000)
  const hour = local.getUTCHours() + local.getUTCMinutes() / 60
  const weekday = local.getUTCDay()
  const startOfYear = Date.UTC(local.getUTCFullYear(), 0, 1)
  const dayOfYear = Math.floor((local.getTime() - startOfYear) / DAY_MS) + 1
  const monthDay = local.toISOString().slice(5, 10)
  const day = Math.floor(local.getTime() / DAY_MS)
  const closed = HOLIDAYS.has(monthDay) || (monthDay >= '08-10' && monthDay <= '08-20')
  const reduced = monthDay >= '12-23' || monthDay <= '01-06' || (monthDay >= '07-28' && monthDay <= '08-28')

  // the sun over Turin (solar time from UTC and longitude; the equation of time is left out)
  const declination = ((23.44 * Math.PI) / 180) * Math.sin((2 * Math.PI * (284 + dayOfYear)) / 365)
  const utcHours = (ms % DAY_MS) / HOUR_MS + 7.5 / 60 // middle of the quarter hour
  const hourAngle = ((utcHours + LONGITUDE_DEG / 15 - 12) * 15 * Math.PI) / 180
  const sunHeight =
    Math.sin(LATITUDE) * Math.sin(declination) + Math.cos(LATITUDE) * Math.cos(declination) * Math.cos(hourAngle)

  // winter is greyer; some days are overcast, most are not; clouds pass within the day
  const winter = 0.5 + 0.5 * Math.cos((2 * Math.PI * (dayOfYear - 15)) / 365)
  const dayClear = Math.min(1, Math.max(0.08, 1.15 - winter * 0.35 - noise(seed, 11, day) ** 1.6 * 0.95))
  const passing = 1 - 0.35 * (1 - dayClear) * smooth(seed, 12, ms / 2_700_000)
  const clearness = Math.max(0.05, Math.min(1, dayClear * passing))
  const clearSky = sunHeight > 0 ? 1050 * sunHeight ** 1.15 : 0
  const ghi = clearSky * clearness
  const diffuse = ghi * (0.15 + 0.7 * (1 - clearness))

  const seasonal = 13 - 11 * Math.cos((2 * Math.PI * (dayOfYear - 20)) / 365)
  const swing = (3 + 5 * dayClear) * Math.cos((2 * Math.PI * (hour - 15)) / 24)
  const weatherDrift = (smooth(seed, 13, ms / DAY_MS / 3) - 0.5) * 7
  const temperature = seasonal + swing + weatherDrift
  const humidity = Math.min(
    100,
    Math.max(18, 72 - swing * 3.5 + (1 - dayClear) * 22 + (noise(seed, 14, ms / QUARTER_MS) - 0.5) * 4),
  )
  const pressure = 1014 + (smooth(seed, 15, ms / DAY_MS / 2.5) - 0.5) * 26
  const rainy = dayClear < 0.4 && smooth(seed, 16, ms / 5_400_000) > 0.55
  const rain = rainy ? Math.round(noise(seed, 17, ms / QUARTER_MS) * 2.4 * 10) / 10 : 0
  const windSpeed = 0.4 + 5.5 * smooth(seed, 18, ms / 18_000_000) ** 2 * (1.2 - dayClear * 0.4)
  const windDirection = (360 * smooth(seed, 19, ms / 43_200_000) + 180) % 360
  return {
    hour,
    weekday,
    dayOfYear,
    occupancy: occupancyOf(hour, weekday, closed, reduced),
    sunHeight,
    clearness,
    ghi,
    diffuse,
    temperature,
    humidity,
    pressure,
    rain,
    windSpeed,
    windDirection,
  }
}
