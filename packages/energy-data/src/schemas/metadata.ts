import Type from 'typebox'

const When = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description })
const Text = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

export const Meter = Type.Object(
  {
    id: Type.Integer({ description: 'Meter identifier' }),
    description: Type.String({ description: 'As held on the datalogger: "<id>) <text>"' }),
    notes: Text('Optional notes'),
    date_from: When('Installation date'),
    date_to: When('Dismissal date'),
    datalogger_id: Type.String({ description: 'Datalogger the meter is connected to; empty for a virtual meter' }),
    type_id: Text('Meter type as a Brick class'),
    unit_id: Text('Unit as a QUDT unit'),
    quantity_id: Text('Quantity as a QUDT quantityKind'),
    virtual: Type.Optional(
      Type.Literal(true, {
        description:
          "A virtual meter only (Brick's isVirtualMeter): its quarter hours are computed from other meters' " +
          '(`formula`), never sent by a datalogger; absent on a real meter',
      }),
    ),
    formula: Type.Optional(
      Type.String({
        description:
          'A virtual meter only: the linear combination of meters it is (`860 - 870`, `0.5*900 + 901`). Its quarter hour ' +
          "exists only where every input's does, its value is the formula over the inputs' values (`sum_value` of " +
          'energy and water meters, `avg_value` of the others), in the same column; min, max, count and the other of ' +
          "avg/sum are null (not derivable from the inputs); its tag is the least trusted of its inputs', and " +
          '`suspect` for an amount below zero',
        examples: ['920 - 921 - 922'],
      }),
    ),
  },
  {
    title: 'Meter',
    examples: [
      {
        id: 860,
        description: '860) Quadro generale Aule P',
        notes: null,
        date_from: '2019-03-01T00:00:00.000Z',
        date_to: null,
        datalogger_id: 'DL-AULEP-01',
        type_id: 'brick:Electrical_Energy_Sensor',
        unit_id: 'unit:KiloW-HR',
        quantity_id: 'quantitykind:Energy',
      },
    ],
  },
)

export const Datalogger = Type.Object(
  {
    id: Type.String({ description: 'Datalogger identifier' }),
    description: Text('Description as held on the datalogger'),
    notes: Text('Optional notes'),
    serial: Type.String({ description: 'Serial number' }),
    date_from: When('Installation date'),
    date_to: When('Dis-installation date'),
    ip: Type.String({ description: 'Network address of the datalogger' }),
  },
  {
    title: 'Datalogger',
    examples: [
      {
        id: 'DL-AULEP-01',
        description: 'Aule P, quadro generale',
        notes: null,
        serial: 'SN-4471-0932',
        date_from: '2019-03-01T00:00:00.000Z',
        date_to: null,
        ip: '10.20.1.11',
      },
    ],
  },
)
