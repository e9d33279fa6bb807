import type { ColumnType, Generated } from 'kysely'
import type { GroupColumn } from '../catalogue/groups.ts'

/** Kysely's view of the energy database; row types stay behind the repositories. */
type Timestamp = ColumnType<Date, Date | string, Date | string>
type Measurement = number | null

type WideTable<Columns extends string> = { time_15m: Timestamp } & { [C in Columns]: Measurement }

export interface DataloggerTable {
  id: string
  description: string | null
  notes: string | null
  serial: string
  date_from: Timestamp | null
  date_to: Timestamp | null
  ip: string
}

export interface MeterTable {
  id: number
  description: string
  notes: string | null
  date_from: Timestamp | null
  date_to: Timestamp | null
  /** Null for a virtual meter, which no datalogger reads. */
  datalogger_id: string | null
  type_id: string | null
  unit_id: string | null
  quantity_id: string | null
}

export interface Data15mTable {
  time_15m: Timestamp
  meter_id: number
  avg_value: Measurement
  min_value: Measurement
  max_value: Measurement
  sum_value: Measurement
  count_value: number | null
  tag: ColumnType<string, string | undefined, string>
  /** Folded from its samples (new samples extend it); false: a seed or an import wrote it. */
  live: ColumnType<boolean | null, boolean | null | undefined, boolean | null>
}

export interface VirtualMeterTable {
  id: number
  formula: string
  kind: string
  created_at: ColumnType<Date, Date | string | undefined, never>
}

export interface ApiKeyTable {
  id: Generated<number>
  name: string
  digest: Buffer
  prefix: string
  endpoints: string[]
  created_at: ColumnType<Date, Date | string | undefined, never>
  expires_at: Timestamp | null
  revoked_at: Timestamp | null
  last_used_at: Timestamp | null
}

export interface BrokerCredentialTable {
  username: string
  role: 'datalogger' | 'ingest'
  datalogger_id: string | null
  password_hash: string
  issued_at: ColumnType<Date, Date | string | undefined, Date | string>
}

export interface EnergyDatabase {
  api_keys: ApiKeyTable
  broker_credentials: BrokerCredentialTable
  dataloggers: DataloggerTable
  meters: MeterTable
  virtual_meters: VirtualMeterTable
  data_15m: Data15mTable
  datacenter_1_15m: WideTable<GroupColumn<'datacenter_1'>>
  pv_15m: WideTable<GroupColumn<'pv'>>
  water_15m: WideTable<GroupColumn<'water'>>
  weather_15m: WideTable<GroupColumn<'weather'>>
  centrali_frigo_15m: WideTable<GroupColumn<'centrali_frigo'>>
  aulep_15m: WideTable<GroupColumn<'aulep'>>
}
